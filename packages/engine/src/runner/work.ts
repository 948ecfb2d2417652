import type { Snapshot } from '../snapshot.js';
import type { OnWrite } from './write-request.js';

/**
 * A count of work in progress and who waits for it to reach zero. Counted, not a set of promises:
 * every dispatched task enters and leaves one, and a set entry, a settle callback and a derived
 * promise per task were a visible share of a runner's time per write.
 */
export class PendingCount {
  /** Units entered and not left yet. */
  pending = 0;
  private waiters: Array<() => void> = [];

  /** One more unit in progress. */
  enter(): void {
    this.pending++;
  }

  /** One unit done (an arrow, so it can be passed as a settle callback without binding). */
  readonly leave = (): void => {
    if (--this.pending === 0 && this.waiters.length > 0) for (const wake of this.waiters.splice(0)) wake();
  };

  /** Counts `p` until it settles (its rejection is the caller's to handle). */
  hold(p: Promise<unknown>): void {
    this.enter();
    p.then(this.leave, this.leave);
  }

  /**
   * Resolves once nothing is pending (at once if nothing is). What settling starts is entered
   * before what started it leaves, so the count reaches zero only when the work is done.
   */
  drained(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

/**
 * One runner call's share of the work: the handler runs its writes started (counted, and waited
 * for before the call resolves), and what those writes reported.
 */
export class Work extends PendingCount {
  /** The newest snapshot this call wrote, per instance. */
  readonly latest = new Map<string, Snapshot>();
  /** Wake time each instance had before this call's first write to it. */
  readonly dueAt = new Map<string, number | null>();
  /** Sent signals the reducer refused for good (skipped, consumed all the same). */
  readonly refused: unknown[] = [];
  /** The one `onWrite` of this call's writes (one function, so its handler results can share a write). */
  report: OnWrite | undefined;
}
