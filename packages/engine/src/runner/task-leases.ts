import { taskKey } from '../reducer/transition-context.js';
import type { Snapshot, TaskState } from '../snapshot.js';

/** One attempt this runner holds: dispatched to it and not ended (waiting for a slot, or running). */
interface Held {
  readonly task: TaskState;
  readonly key: string;
  /** The newest snapshot of its instance this runner knows: a renewal writes onto it. */
  base: Snapshot;
  leaseUntil: number;
  /** A renewal of it is being written. */
  renewing: boolean;
}

/** Writes one heartbeat per attempt in `tasks`, all of instance `base.id`, in one write; resolves with the stored snapshot. */
export type RenewLeases = (base: Snapshot, tasks: readonly TaskState[]) => Promise<Snapshot>;

/**
 * The leases of the attempts a runner holds. Each attempt that starts running here gets a lease
 * in the snapshot (`leaseUntil`); while this runner still holds it (its handler running, or its
 * job waiting in a worker's pool) it is renewed with `task.heartbeat` once half of it is left, so
 * before a third is: a sweep every sixth of a lease finds those, one write per instance. A handler
 * that ends sooner (most do) costs no write at all, and nothing per task beyond an entry here. An
 * attempt this runner stops renewing (its process died) lapses, and any worker's due poll retries it.
 */
export class TaskLeases {
  private readonly held = new Map<string, Held[]>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    /** The lease the runner's reducer gives (`taskLeaseMs`). */
    readonly leaseMs: number,
    private readonly clock: () => number,
    private readonly renew: RenewLeases,
  ) {}

  /** Attempts held, for tests and stats. */
  get size(): number {
    let n = 0;
    for (const list of this.held.values()) n += list.length;
    return n;
  }

  /** Holds `task`, which `s` dispatched to this runner (a task without a lease is not held). */
  hold(s: Snapshot, task: TaskState): void {
    if (task.leaseUntil === undefined) return;
    const entry: Held = {
      task,
      key: taskKey(task.step, task.phase, task.item),
      base: s,
      leaseUntil: task.leaseUntil,
      renewing: false,
    };
    const list = this.held.get(s.id);
    if (list) list.push(entry);
    else this.held.set(s.id, [entry]);
    this.timer ??= this.schedule();
  }

  /** Stops renewing `task` (its handler settled, or its job was dropped or given back). */
  end(instance: string, task: TaskState): void {
    const list = this.held.get(instance);
    if (!list) return;
    const i = list.findIndex((h) => h.task === task);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.forget(instance);
  }

  /** Drops the instance's (empty) list; with nothing held, no sweep stays planned (a stopped worker leaves no timer). */
  private forget(instance: string): void {
    this.held.delete(instance);
    if (this.held.size > 0 || this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * A snapshot of the instance this runner wrote or read back: the held attempts it still hands
   * out take its lease and base; those it no longer hands out (lost, replaced) are forgotten.
   */
  written(s: Snapshot): void {
    const list = this.held.get(s.id);
    if (!list) return;
    for (let i = list.length - 1; i >= 0; i--) {
      const h = list[i]!;
      if (s.version < h.base.version) continue;
      const t = s.tasks[h.key];
      if (!t || t.attempt !== h.task.attempt || t.idempotencyKey !== h.task.idempotencyKey) {
        list.splice(i, 1);
        continue;
      }
      h.base = s;
      if (t.leaseUntil !== undefined) h.leaseUntil = t.leaseUntil;
    }
    if (list.length === 0) this.forget(s.id);
  }

  /** The next sweep, a sixth of a lease away; none while nothing is held. Unref'd: it never keeps a process up. */
  private schedule(): ReturnType<typeof setTimeout> | undefined {
    if (this.held.size === 0) return undefined;
    const timer = setTimeout(() => this.sweep(), Math.max(10, Math.floor(this.leaseMs / 6)));
    (timer as { unref?: () => void }).unref?.();
    return timer;
  }

  /** Renews every held attempt with half its lease or less left: one write per instance. */
  private sweep(): void {
    this.timer = undefined;
    const now = this.clock();
    const half = this.leaseMs / 2;
    for (const list of this.held.values()) {
      const due = list.filter((h) => !h.renewing && h.leaseUntil - now <= half);
      if (due.length === 0) continue;
      let base = due[0]!.base;
      for (const h of due) {
        h.renewing = true;
        if (h.base.version > base.version) base = h.base;
      }
      const done = () => {
        for (const h of due) h.renewing = false;
      };
      this.renew(
        base,
        due.map((h) => h.task),
      ).then(
        (s) => {
          done();
          // Read back unchanged when the attempt is gone: forgotten here, its handler aborted there.
          this.written(s);
        },
        // Not written (the store is down, a lost race past the retries): the next sweep tries again.
        done,
      );
    }
    this.timer = this.schedule();
  }
}
