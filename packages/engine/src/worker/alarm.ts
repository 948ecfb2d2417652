import { Sleeper } from './clock.js';
import { WakeTimes } from './wake-times.js';

// Future wake times remembered; more are left to polling.
const MAX_KNOWN = 256;

/**
 * What wakes a worker's loop, in one place: a call for a round now (`ring`), a wake time heard of
 * (`hear`), and the sleep they cut short. Everything that learns of due work (wake notices, the
 * runner's own writes, a freed slot, a claim held ahead) goes through it.
 */
export class Alarm {
  private readonly sleeper = new Sleeper();
  /** Wake times heard of, so the loop sleeps until the earliest instead of polling. */
  readonly known = new WakeTimes(MAX_KNOWN);
  /** A round is wanted now (set by `ring`); a wake that only re-plans the sleep leaves it unset. */
  urgent = false;
  /** The next round polls every lane: something due was heard of that no one named. */
  lanesDue = true;

  constructor(private readonly clock: () => number) {}

  /** Asks for a round now; `named` when the poller knows the instance, so the lanes can wait. */
  ring(named = false): void {
    this.urgent = true;
    if (!named) this.lanesDue = true;
    this.sleeper.wake();
  }

  /** A wake time arrived: a round now if it has passed, else the sleep is re-planned if it is the new earliest. */
  hear(at: number, named: boolean): void {
    // Not `at > now` (NaN included, which would sit first in the known times for good): now.
    if (!(at > this.clock())) this.ring(named);
    else if (this.known.add(at, named)) this.sleeper.wake();
  }

  /** Sleeps up to `ms`, or until rung or re-planned. */
  sleep(ms: number): Promise<void> {
    return this.sleeper.sleep(ms);
  }

  /**
   * Starts a round at `now`: clears the call for one, and says whether it must poll every lane
   * (an unnamed wake time passed, something unnamed rang, or the planned poll is due).
   */
  beginRound(now: number, planned: number): boolean {
    this.urgent = false;
    const lanes = this.known.pass(now) || this.lanesDue || now >= planned;
    this.lanesDue = false;
    return lanes;
  }
}
