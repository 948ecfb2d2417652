import { isTerminal, type Snapshot } from '../snapshot.js';
import type { BasedWrite, WriteBase, WriteRequest } from './write-request.js';

// Instances whose newest written snapshot is remembered; older ones are forgotten first.
const REMEMBERED = 256;

/**
 * The newest snapshot of one instance this runner wrote, emptied when the instance is forgotten. A
 * map keeps the tables it outgrew (and rehashed away from) pointing at their entries until a full
 * collection; a forgotten snapshot reached from such a table would survive young collections and
 * be copied into the old space with everything it references, so the map holds this box instead.
 */
interface Newest {
  s: Snapshot | undefined;
}

/** The last write of an instance queued here: its promise, whether it started, whether it saved. */
interface Tail {
  p: Promise<Snapshot> | undefined;
  started: boolean;
  saved: boolean;
}

/**
 * One runner's writes per instance, in order, and the newest snapshot each wrote. Two handlers of
 * one instance that finish together (parallel branches) would both write from the version that
 * dispatched them: one would lose its race, reload and apply again. Here the second waits for the
 * first and starts from the snapshot it wrote. A write another process made meanwhile is still a
 * lost race, found by the conditional save as before.
 */
export class InstanceWrites {
  private readonly tails = new Map<string, Tail>();
  private readonly newest = new Map<string, Newest>();

  /**
   * Runs `write` of `request` once every earlier write of its instance by this runner is done,
   * with the request's base replaced by the snapshot this runner wrote last when that one is newer
   * (its own reducer made that one). Done: settled, or saved (the saved snapshot is the newest by
   * then, and what is left of that write is its report, which runs before anything else can).
   */
  run(request: WriteRequest, write: BasedWrite): Promise<Snapshot> {
    const id = request.id;
    const before = this.tails.get(id);
    const tail: Tail = { p: undefined, started: !before || before.saved, saved: false };
    const start = () => {
      tail.started = true;
      return write(request, this.freshest(request));
    };
    const p = tail.started ? start() : before!.p!.then(start, start);
    tail.p = p;
    this.tails.set(id, tail);
    const settled = () => {
      if (this.tails.get(id) !== tail) return;
      // Its promise (and the snapshot it holds) let go: see `Newest`.
      tail.p = undefined;
      this.tails.delete(id);
    };
    p.then(settled, settled);
    return p;
  }

  /** Whether a write of `id` by this runner is queued or running and has not saved (a new one would wait for it). */
  busy(id: string): boolean {
    const tail = this.tails.get(id);
    return tail !== undefined && !tail.saved;
  }

  /** Records `s` as the newest snapshot of its instance this runner wrote (its write, if it is the last queued, is done). */
  wrote(s: Snapshot): void {
    const tail = this.tails.get(s.id);
    if (tail?.started) tail.saved = true;
    // Deleted and set again: the map's order is the order of the instances' last writes.
    const known = this.newest.get(s.id);
    if (known) this.newest.delete(s.id);
    if (isTerminal(s.status)) {
      if (known) known.s = undefined;
      return;
    }
    const box = known ?? { s };
    box.s = s;
    this.newest.set(s.id, box);
    if (this.newest.size > REMEMBERED) {
      const [oldest, dropped] = this.newest.entries().next().value!;
      dropped.s = undefined;
      this.newest.delete(oldest);
    }
  }

  /** The base a write of `request` starts from: its own, or the newer snapshot this runner wrote since. */
  private freshest(request: WriteRequest): WriteBase | undefined {
    const base = request.base;
    const newer = base && this.newest.get(request.id)?.s;
    return newer && newer.version > base!.snapshot.version ? { snapshot: newer, origin: 'reducer' } : base;
  }
}
