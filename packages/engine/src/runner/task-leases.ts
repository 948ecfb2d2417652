import { taskKey } from '../reducer/transition-context.js';
import type { Snapshot, TaskState } from '../snapshot.js';

/** Instances whose lists are kept empty (see `TaskLeases.held`) before their keys are dropped. */
const MAX_VACANT = 32;

/** One `ctx.heartbeat()` call: its details, JSON-copied and checked, when it passed any. */
export interface HandlerBeat {
  details?: unknown;
}

/** One attempt this runner holds: dispatched to it and not ended (waiting for a slot, or running). */
export interface Held {
  readonly task: TaskState;
  readonly key: string;
  /** The newest snapshot of its instance this runner knows: a renewal writes onto it. */
  base: Snapshot;
  leaseUntil: number;
  /** A renewal of it is being written. */
  renewing: boolean;
  /** Its handler runs and its step has `heartbeatMs`: only the handler's heartbeats renew it now. */
  beating: boolean;
  /** A heartbeat of its handler not written yet, with the newest details it was given. */
  beat: HandlerBeat | undefined;
  /** When its latest renewal was asked for (or it was dispatched): the throttle of heartbeats. */
  sentAt: number;
}

/** One attempt a renewal writes a `task.heartbeat` for, with its handler's details if any. */
export interface Renewal {
  readonly task: TaskState;
  readonly beat?: HandlerBeat | undefined;
}

/** Writes one heartbeat per renewal in `renewals`, all of instance `base.id`, in one write; resolves with the stored snapshot. */
export type RenewLeases = (base: Snapshot, renewals: readonly Renewal[]) => Promise<Snapshot>;

/**
 * The leases of the attempts a runner holds. Each attempt that starts running here gets a lease
 * in the snapshot (`leaseUntil`); while this runner still holds it (its handler running, or its
 * job waiting in a worker's pool) it is renewed with `task.heartbeat` once half of it is left, so
 * before a third is: a sweep every sixth of a lease finds those, one write per instance. A handler
 * that ends sooner (most do) costs no write at all, and nothing per task beyond an entry here. An
 * attempt this runner stops renewing (its process died) lapses, and any worker's due poll retries it.
 *
 * A step with `heartbeatMs` leases its attempts for that long, and once its handler runs only the
 * handler's `ctx.heartbeat()` renews them: a hung handler is lost though its process lives. The
 * heartbeats themselves (their throttle, their details) are `handlerHeartbeats`' leases, a
 * subclass in handler-heartbeats.ts that a runner carries only when given it.
 */
export class TaskLeases {
  /**
   * The attempts held, by instance. An instance's list stays (empty) when its last attempt ends:
   * its next task (most often the next thing it does) takes the same list, and the map is not
   * written per task (a delete shrinks a small map's table and the next set grows it again: two new
   * tables, which survive into the next young collection). Empty lists are dropped in batches.
   */
  protected readonly held = new Map<string, Held[]>();
  /** Instances with an attempt held (a non-empty list). */
  private holding = 0;
  /** Instances whose list is empty, still keyed in `held`. */
  private vacant = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The shortest lease held since the last sweep: the sweep's pace. */
  private shortest: number;

  constructor(
    /** The lease the runner's reducer gives (`taskLeaseMs`). */
    readonly leaseMs: number,
    protected readonly clock: () => number,
    private readonly renew: RenewLeases,
  ) {
    this.shortest = leaseMs;
  }

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
      beating: false,
      beat: undefined,
      sentAt: this.heldSince(),
    };
    const list = this.held.get(s.id);
    if (!list) {
      this.held.set(s.id, [entry]);
      this.holding++;
    } else {
      if (list.length === 0) {
        this.vacant--;
        this.holding++;
      }
      list.push(entry);
    }
    const lease = this.leaseOf(entry);
    if (lease < this.shortest && this.timer !== undefined) {
      // A shorter lease than the planned sweep's pace can wait for: plan it again.
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.shortest = Math.min(this.shortest, lease);
    this.timer ??= this.schedule();
  }

  /**
   * The handler of `task` starts: for a step with `heartbeatMs`, only its heartbeats renew it from
   * now (a runner without handler heartbeats renews it no more: it lapses at `heartbeatMs`).
   */
  started(instance: string, task: TaskState): Held | undefined {
    const h = task.heartbeatMs === undefined ? undefined : this.find(instance, task);
    if (h) h.beating = true;
    return h;
  }

  /** Stops renewing `task` (its handler settled, or its job was dropped or given back). */
  end(instance: string, task: TaskState): void {
    const list = this.held.get(instance);
    if (!list) return;
    // The usual list holds this attempt alone: no closure, no splice (it allocates the array it removes).
    if (list.length === 1) {
      if (list[0]!.task === task) this.vacate(list);
      return;
    }
    for (let i = 0; i < list.length; i++) {
      if (list[i]!.task !== task) continue;
      list.splice(i, 1);
      return;
    }
  }

  protected find(instance: string, task: TaskState): Held | undefined {
    return this.held.get(instance)?.find((h) => h.task === task);
  }

  /**
   * What a new hold's `sentAt` starts at. Only handler heartbeats' throttle reads it (they count
   * from the dispatch, by the clock); plain leases do not, so they read no clock per task.
   */
  protected heldSince(): number {
    return 0;
  }

  /** How long a renewal of `h` leases it: its step's `heartbeatMs`, else the runner's lease. */
  protected leaseOf(h: Held): number {
    return h.task.heartbeatMs ?? this.leaseMs;
  }

  /**
   * Empties an instance's list: it holds nothing now. The planned sweep stays: with a few instances
   * in flight nothing is held between each result's write and the next dispatch, and a timer cleared
   * and set again per task was a visible share of a write's CPU. A sweep that finds nothing held
   * plans none. Emptied, not replaced: a table the map rehashed away from may still point at the
   * list until a full collection, and the entries' snapshots would be copied out of the young space
   * with it.
   */
  private vacate(list: Held[]): void {
    while (list.length > 0) list.pop();
    this.holding--;
    if (++this.vacant > MAX_VACANT) this.purge();
  }

  /** Drops the keys of the instances that hold nothing. */
  private purge(): void {
    if (this.vacant === 0) return;
    for (const [instance, list] of this.held) if (list.length === 0) this.held.delete(instance);
    this.vacant = 0;
  }

  /** Cancels the planned sweep if nothing is held (a stopping worker leaves no timer). */
  quiet(): void {
    this.purge();
    if (this.holding > 0 || this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * A snapshot of the instance this runner wrote or read back: the held attempts it still hands
   * out take its lease and base; those it no longer hands out (lost, replaced) are forgotten.
   */
  written(s: Snapshot): void {
    const list = this.held.get(s.id);
    if (!list || list.length === 0) return;
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
    if (list.length === 0) this.vacate(list);
  }

  /** The next sweep, a sixth of the shortest lease away; none while nothing is held. Unref'd: it never keeps a process up. */
  private schedule(): ReturnType<typeof setTimeout> | undefined {
    if (this.holding === 0) return undefined;
    const timer = setTimeout(() => this.sweep(), Math.max(10, Math.floor(this.shortest / 6)));
    (timer as { unref?: () => void }).unref?.();
    return timer;
  }

  /** Renews every held attempt that is due (see {@link sweepList}): one write per instance. */
  private sweep(): void {
    this.timer = undefined;
    this.shortest = this.leaseMs;
    this.purge();
    for (const list of this.held.values()) {
      for (const h of list) this.shortest = Math.min(this.shortest, this.leaseOf(h));
      this.sweepList(list);
    }
    this.timer = this.schedule();
  }

  /** Whether `h` is due a renewal at `now`: half of its lease or less left, unless its handler heartbeats it. */
  protected due(h: Held, now: number): boolean {
    return !h.beating && h.leaseUntil - now <= this.leaseOf(h) / 2;
  }

  /**
   * Renews, in one write, the attempts of one instance that are due (see {@link due}), with the
   * details of a handler's heartbeat not written yet.
   */
  protected sweepList(list: Held[]): void {
    const now = this.clock();
    const due = list.filter((h) => !h.renewing && this.due(h, now));
    if (due.length === 0) return;
    let base = due[0]!.base;
    const renewals: Renewal[] = [];
    for (const h of due) {
      h.renewing = true;
      h.sentAt = now;
      renewals.push({ task: h.task, beat: h.beat });
      h.beat = undefined;
      if (h.base.version > base.version) base = h.base;
    }
    const done = () => {
      for (const h of due) h.renewing = false;
    };
    this.renew(base, renewals).then(
      (s) => {
        done();
        // Read back unchanged when the attempt is gone: forgotten here, its handler aborted there.
        this.written(s);
      },
      // Not written (the store is down, a lost race past the retries): the next sweep tries again,
      // with the beat not written unless a newer one came.
      () => {
        done();
        due.forEach((h, i) => {
          h.beat ??= renewals[i]!.beat;
        });
      },
    );
  }
}
