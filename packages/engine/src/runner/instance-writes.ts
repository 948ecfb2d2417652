import { isTerminal, type Snapshot } from '../snapshot.js';
import type { WriteBase } from './write-request.js';

// Instances whose newest written snapshot is remembered; older ones are forgotten first.
const REMEMBERED = 256;

/**
 * One runner's writes per instance, in order, and the newest snapshot each wrote. Two handlers of
 * one instance that finish together (parallel branches) would both write from the version that
 * dispatched them: one would lose its race, reload and apply again. Here the second waits for the
 * first and starts from the snapshot it wrote. A write another process made meanwhile is still a
 * lost race, found by the conditional save as before.
 */
export class InstanceWrites {
  private readonly tails = new Map<string, Promise<unknown>>();
  private readonly newest = new Map<string, Snapshot>();

  /**
   * Runs `write` once every earlier write of `id` by this runner has settled, with `base` replaced
   * by the snapshot this runner wrote last when that one is newer (its own reducer made that one).
   */
  run<T>(
    id: string,
    base: WriteBase | undefined,
    write: (base: WriteBase | undefined) => Promise<T>,
  ): Promise<T> {
    const before = this.tails.get(id);
    const start = () => {
      const newer = base && this.newest.get(id);
      return write(
        newer && newer.version > base!.snapshot.version ? { snapshot: newer, origin: 'reducer' } : base,
      );
    };
    const p = before ? before.then(start, start) : start();
    this.tails.set(id, p);
    const settled = () => {
      if (this.tails.get(id) === p) this.tails.delete(id);
    };
    p.then(settled, settled);
    return p;
  }

  /** Whether a write of `id` by this runner has not settled yet (a new one would wait for it). */
  busy(id: string): boolean {
    return this.tails.has(id);
  }

  /** Records `s` as the newest snapshot of its instance this runner wrote. */
  wrote(s: Snapshot): void {
    this.newest.delete(s.id);
    if (isTerminal(s.status)) return;
    this.newest.set(s.id, s);
    if (this.newest.size > REMEMBERED) this.newest.delete(this.newest.keys().next().value!);
  }
}
