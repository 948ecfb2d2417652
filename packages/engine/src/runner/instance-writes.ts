import { isTerminal, type Snapshot } from '../snapshot.js';
import type { BasedWrite, WriteBase, WriteRequest } from './write-request.js';

// Instances whose newest written snapshot is remembered; the least recently written are
// forgotten first, in batches of EVICTED once there are that many more.
const REMEMBERED = 256;
const EVICTED = 32;

/** The last write of an instance queued here: its promise, whether it started, whether it saved. */
interface Tail {
  p: Promise<Snapshot> | undefined;
  started: boolean;
  saved: boolean;
}

/**
 * What this runner knows of one instance: the newest snapshot of it this runner wrote (emptied
 * when forgotten), and its last write queued here. One record per instance, kept across its
 * writes: the map is not written per write (a delete and a set, or a set per write with a delete
 * once it settles, rehash a small map's table every few writes, and each new table survives into
 * the next young collection). A map keeps the tables it outgrew pointing at their entries until a
 * full collection: a record forgotten is emptied, so no snapshot is reached from such a table.
 */
interface Known {
  readonly id: string;
  s: Snapshot | undefined;
  tail: Tail | undefined;
  /** When `s` was written, in this runner's count of writes: the least recent are forgotten first. */
  written: number;
}

/**
 * One runner's writes per instance, in order, and the newest snapshot each wrote. Two handlers of
 * one instance that finish together (parallel branches) would both write from the version that
 * dispatched them: one would lose its race, reload and apply again. Here the second waits for the
 * first and starts from the snapshot it wrote. A write another process made meanwhile is still a
 * lost race, found by the conditional save as before.
 */
export class InstanceWrites {
  private readonly known = new Map<string, Known>();
  /** Records with a snapshot. */
  private remembered = 0;
  private writes = 0;

  /**
   * Runs `write` of `request` once every earlier write of its instance by this runner is done,
   * with the request's base replaced by the snapshot this runner wrote last when that one is newer
   * (its own reducer made that one). Done: settled, or saved (the saved snapshot is the newest by
   * then, and what is left of that write is its report, which runs before anything else can).
   */
  run(request: WriteRequest, write: BasedWrite): Promise<Snapshot> {
    const id = request.id;
    let k = this.known.get(id);
    if (k === undefined) {
      k = { id, s: undefined, tail: undefined, written: 0 };
      this.known.set(id, k);
    }
    const known = k;
    const before = known.tail;
    const tail: Tail = { p: undefined, started: !before || before.saved, saved: false };
    const start = () => {
      tail.started = true;
      return write(request, this.freshest(request, known));
    };
    const p = tail.started ? start() : before!.p!.then(start, start);
    tail.p = p;
    known.tail = tail;
    const settled = () => {
      if (known.tail !== tail) return;
      // Its promise (and the snapshot it holds) let go: see `Known`.
      tail.p = undefined;
      known.tail = undefined;
      if (known.s === undefined) this.drop(known);
    };
    p.then(settled, settled);
    return p;
  }

  /** Whether a write of `id` by this runner is queued or running and has not saved (a new one would wait for it). */
  busy(id: string): boolean {
    const tail = this.known.get(id)?.tail;
    return tail !== undefined && !tail.saved;
  }

  /** Records `s` as the newest snapshot of its instance this runner wrote (its write, if it is the last queued, is done). */
  wrote(s: Snapshot): void {
    let known = this.known.get(s.id);
    if (known?.tail?.started) known.tail.saved = true;
    if (isTerminal(s.status)) {
      if (known === undefined) return;
      if (known.s !== undefined) this.remembered--;
      known.s = undefined;
      if (known.tail === undefined) this.drop(known);
      return;
    }
    if (known === undefined) {
      known = { id: s.id, s: undefined, tail: undefined, written: 0 };
      this.known.set(s.id, known);
    }
    if (known.s === undefined) this.remembered++;
    known.s = s;
    known.written = ++this.writes;
    if (this.remembered > REMEMBERED + EVICTED) this.evict();
  }

  /** Forgets the snapshots of all but the REMEMBERED most recently written instances. */
  private evict(): void {
    const kept: Known[] = [];
    for (const k of this.known.values()) if (k.s !== undefined) kept.push(k);
    kept.sort((a, b) => a.written - b.written);
    for (let i = 0; i < kept.length - REMEMBERED; i++) {
      const k = kept[i]!;
      k.s = undefined;
      this.remembered--;
      if (k.tail === undefined) this.drop(k);
    }
  }

  /** Drops a record that holds nothing (no snapshot, no write queued). */
  private drop(known: Known): void {
    if (this.known.get(known.id) === known) this.known.delete(known.id);
  }

  /** The base a write of `request` starts from: its own, or the newer snapshot this runner wrote since. */
  private freshest(request: WriteRequest, known: Known): WriteBase | undefined {
    const base = request.base;
    const newer = base && known.s;
    return newer && newer.version > base!.snapshot.version ? { snapshot: newer, origin: 'reducer' } : base;
  }
}
