import type { Snapshot } from '../snapshot.js';
import type { OnWrite } from './write-request.js';

/**
 * One runner call's share of the work: the handler runs its writes started (a set of their
 * promises, waited for before the call resolves), and what those writes reported.
 */
export class Work extends Set<Promise<unknown>> {
  /** The newest snapshot this call wrote, per instance. */
  readonly latest = new Map<string, Snapshot>();
  /** Wake time each instance had before this call's first write to it. */
  readonly dueAt = new Map<string, number | null>();
  /** Sent signals the reducer refused for good (skipped, consumed all the same). */
  readonly refused: unknown[] = [];
  /** The one `onWrite` of this call's writes (one function, so its handler results can share a write). */
  report: OnWrite | undefined;
  private waiters: Array<() => void> = [];

  /** Counts `p` in this call until it settles (its rejection is the caller's to handle). */
  hold(p: Promise<unknown>): void {
    this.add(p);
    const drop = () => {
      this.delete(p);
      if (this.size === 0 && this.waiters.length > 0) for (const wake of this.waiters.splice(0)) wake();
    };
    p.then(drop, drop);
  }

  /**
   * Resolves once nothing this call holds is pending (at once if nothing is). What settling starts
   * is held before what started it is dropped, so the call is empty only when its work is done.
   */
  drained(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
