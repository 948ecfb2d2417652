import { isTerminal, type Snapshot } from '../snapshot.js';
import type { BasedWrite, WriteBase, WriteRequest } from './write-request.js';

// Instances whose newest written snapshot is remembered; older ones are forgotten first.
const REMEMBERED = 256;

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
  private readonly newest = new Map<string, Snapshot>();

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
      if (this.tails.get(id) === tail) this.tails.delete(id);
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
    this.newest.delete(s.id);
    if (isTerminal(s.status)) return;
    this.newest.set(s.id, s);
    if (this.newest.size > REMEMBERED) this.newest.delete(this.newest.keys().next().value!);
  }

  /** The base a write of `request` starts from: its own, or the newer snapshot this runner wrote since. */
  private freshest(request: WriteRequest): WriteBase | undefined {
    const base = request.base;
    const newer = base && this.newest.get(request.id);
    return newer && newer.version > base!.snapshot.version ? { snapshot: newer, origin: 'reducer' } : base;
  }
}
