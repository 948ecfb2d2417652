import { backoffDelay } from '../backoff.js';
import type { Alarm } from './alarm.js';
import { jittered, WallTimer } from './clock.js';
import type { DuePoller, RoundResult } from './due-poller.js';
import type { ResolvedWorkerOptions } from './options.js';
import type { TaskPool } from './task-pool.js';
import type { EmitEvent, WorkerStats } from './types.js';

/**
 * What the loop is doing:
 * - `polling`: a round is claiming and ticking;
 * - `sleeping`: between rounds, until the planned poll, the earliest known wake time, or a ring;
 * - `waitingForSlot`: every slot is taken; a freed slot rings;
 * - `backingOff`: the last poll failed (the store is down); retried on the outage schedule;
 * - `stopped`: the worker is stopping and the loop has returned.
 */
export type LoopMode = 'polling' | 'sleeping' | 'waitingForSlot' | 'backingOff' | 'stopped';

/**
 * The pace of lane polls: after a round that found work the next comes at once; after an empty
 * one the pause grows by `factor` up to a cap (higher while wakes are live: polling is then only a
 * backstop). `planned` is when the next round that polls every lane is due.
 */
export class PollPace {
  private pause: number;
  planned = 0;

  constructor(private readonly pace: ResolvedWorkerOptions['pace']) {
    this.pause = pace.minMs;
  }

  /** A lane round returned a full batch: poll again at once. */
  full(): void {
    this.pause = this.pace.minMs;
    this.planned = 0;
  }

  /** A lane round ended at `now` having ticked `ticked`: plans the next. */
  after(ticked: number, now: number, wakesLive: boolean): void {
    // With wakes live, still often enough to find a lapsed lease in time (see `Pace.leaseCapMs`).
    const cap = wakesLive ? Math.min(this.pace.maxWithWakesMs, this.pace.leaseCapMs) : this.pace.maxMs;
    this.pause = ticked > 0 ? this.pace.minMs : Math.min(this.pause * this.pace.factor, cap);
    this.planned = now + jittered(this.pause, this.pace.jitter);
  }
}

/**
 * A worker's round/sleep machine: runs a round (named instances, and every lane when due), then
 * sleeps until the next is due, in the modes of {@link LoopMode}. It ends when `running()` turns false.
 */
export class WorkerLoop {
  mode: LoopMode = 'sleeping';
  /** Rounds finished, and whether the last one ticked nothing (for `idle()`). */
  roundsDone = 0;
  lastRoundEmpty = false;
  /** Whether a wake subscription is live (the pause may then grow further). */
  wakesLive = false;
  private readonly roundWaiters: Array<() => void> = [];
  private readonly pace: PollPace;
  private readonly wall: WallTimer | undefined;

  constructor(
    private readonly o: ResolvedWorkerOptions,
    private readonly alarm: Alarm,
    private readonly poller: DuePoller,
    private readonly pool: TaskPool,
    private readonly stats: WorkerStats,
    private readonly emit: EmitEvent,
    private readonly running: () => boolean,
  ) {
    this.pace = new PollPace(o.pace);
    // Sleeps on the system clock end within a fraction of a ms of their time; a given clock is taken as it is.
    this.wall = o.customClock ? undefined : new WallTimer();
  }

  private until(at: number): number {
    return this.wall ? this.wall.until(at) : at - this.o.clock();
  }

  /** Resolves after the next round ends (or at stop). */
  nextRound(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.roundWaiters.push(resolve);
      this.alarm.ring();
    });
  }

  /** Lets every caller waiting for a round go (on stop). */
  releaseWaiters(): void {
    for (const w of this.roundWaiters.splice(0)) w();
  }

  /** Runs until the worker stops. */
  async run(): Promise<void> {
    let outages = 0;
    while (this.running()) {
      if (this.pool.free() === 0) {
        this.mode = 'waitingForSlot';
        await this.alarm.sleep(this.o.pace.maxWithWakesMs);
        continue;
      }
      this.mode = 'polling';
      const lanes = this.alarm.beginRound(this.o.clock(), this.pace.planned);
      let result: RoundResult;
      try {
        result = await this.poller.round(lanes);
        outages = 0;
      } catch (e) {
        this.stats.errors++;
        this.emit('error', e, 'poll');
        this.alarm.lanesDue = true;
        this.mode = 'backingOff';
        await this.alarm.sleep(backoffDelay(this.o.outage, outages++));
        continue;
      } finally {
        this.stats.conflicts = this.o.runner.stats.conflicts;
      }
      this.roundsDone++;
      this.lastRoundEmpty = result.ticked === 0;
      this.releaseWaiters();
      if (result.full) {
        this.pace.full();
        continue;
      }
      // A round for named instances alone leaves the pace and the planned poll as they were.
      if (lanes) this.pace.after(result.ticked, this.o.clock(), this.wakesLive);
      // Named instances left for want of a slot: the next round takes them (once a slot frees).
      if (result.left) continue;
      await this.sleep();
    }
    this.mode = 'stopped';
  }

  /**
   * Until the planned poll or the earliest known wake time, whichever is first; a wake time heard
   * meanwhile moves that end earlier; a ring ends the sleep.
   */
  private async sleep(): Promise<void> {
    this.mode = 'sleeping';
    const { known } = this.alarm;
    for (
      let end = Math.min(this.pace.planned, known.earliest ?? this.pace.planned);
      this.running() && !this.alarm.urgent;
    ) {
      if (end - this.o.clock() <= 0) break;
      await this.alarm.sleep(this.until(end));
      end = Math.min(this.pace.planned, known.earliest ?? this.pace.planned);
    }
  }
}
