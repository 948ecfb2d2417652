import { dispatchedBy } from '../reducer/task-view.js';
import { CHILD_HANDLER, type LogEntry, type Snapshot, type TaskState } from '../snapshot.js';
import type { ChildEffectsPort } from './child-port.js';
import type { RunTask, TaskResult } from './execute-task.js';
import type { RunnerHeartbeats } from './handler-heartbeats.js';
import type { Handler } from './handler-types.js';
import type { DefinedHooks } from './hooks.js';
import type { InFlight } from './in-flight.js';
import type { RunnerCore, TaskHand } from './port.js';
import type { WorkflowRegistry } from './registry.js';
import { type Renewal, TaskLeases } from './task-leases.js';
import { Work } from './work.js';
import type { WriteLoop } from './write-loop.js';
import type { OnWrite } from './write-request.js';

const ignore = () => {};

/** What {@link WriteEffects} works with: the runner's writes, handlers and observers. */
export interface WriteEffectsParts {
  writes: WriteLoop;
  registry: WorkflowRegistry;
  inFlight: InFlight;
  handlers: Readonly<Record<string, Handler>>;
  /** Runs one handler attempt (traced and with offloading, when the runner has them). */
  runTask: RunTask;
  hooks?: DefinedHooks | undefined;
  onWritten?: ((snapshot: Snapshot, transitions: readonly LogEntry[]) => void) | undefined;
  /** The runner's side of child workflows, when a kind set brings them. */
  children?: ChildEffectsPort | undefined;
  /** The lease of an attempt that starts running (the runner's `taskLeaseMs`), and the clock it runs on. */
  leaseMs: number;
  /** Handler heartbeats (`ctx.heartbeat`), when the runner was given them. */
  heartbeats?: RunnerHeartbeats | undefined;
  clock: () => number;
}

/**
 * What follows each write a runner makes: its observers, the child effects it asks for, and the
 * tasks it dispatched, run at once or handed to the worker attached. It is the core a runner lends
 * a worker ({@link RunnerCore}): the worker drives the same writes and tasks through it.
 */
export class WriteEffects implements RunnerCore {
  readonly writes: WriteLoop;
  readonly inFlight: InFlight;
  /** The leases of the attempts this runner holds, renewed while they run. */
  readonly leases: TaskLeases;
  /** The attached worker's hand, which takes every dispatched task (none: each runs at once); port.ts sets it. */
  executor: TaskHand | undefined;
  /** The attached worker's observer of every snapshot written; port.ts sets it. */
  observer: ((s: Snapshot) => void) | undefined;

  constructor(private readonly parts: WriteEffectsParts) {
    this.writes = parts.writes;
    this.inFlight = parts.inFlight;
    const renew = (base: Snapshot, renewals: readonly Renewal[]) => this.heartbeat(base, renewals);
    this.leases = parts.heartbeats
      ? parts.heartbeats.leases(parts.leaseMs, parts.clock, renew)
      : new TaskLeases(parts.leaseMs, parts.clock, renew);
  }

  /** Whether a worker drives this runner (a child's end then goes through the parent's inbox). */
  get driven(): boolean {
    return this.executor !== undefined;
  }

  /** What a call's writes report to: everything a write of that call sets off is counted in it. */
  report(call: Work): OnWrite {
    call.report ??= (s, transitions, before, dueAt) => this.written(call, s, transitions, before, dueAt);
    return call.report;
  }

  /** Ends one task `s` dispatched, counted in `call` and the runner (run, dropped, or given back): its lease is no longer renewed. */
  finish(call: Work, s: Snapshot, task: TaskState): void {
    this.leases.end(s.id, task);
    call.leave();
    this.inFlight.leave();
  }

  /**
   * One write that renews the leases of the `renewals`' attempts (of one instance), with their
   * handlers' details, from `base` (the newest snapshot of it this runner knows); resolves with
   * the stored snapshot. A read back without the attempt (another worker retried it) aborts its handler here.
   */
  private heartbeat(base: Snapshot, renewals: readonly Renewal[]): Promise<Snapshot> {
    const beat =
      ({ task: t, beat: b }: Renewal) =>
      (at: number) =>
        ({
          type: 'task.heartbeat',
          at,
          step: t.step,
          attempt: t.attempt,
          phase: t.phase,
          key: t.idempotencyKey,
          ...(t.item === undefined ? {} : { item: t.item }),
          ...(b && 'details' in b ? { details: b.details } : {}),
        }) as const;
    const [first, ...rest] = renewals;
    return this.writes
      .apply({
        id: base.id,
        event: beat(first!),
        // The others ride on the same write: applied after the first, in order.
        also: rest.map((t) => ({ event: beat(t), refused: ignore })),
        onWrite: this.report(new Work()),
        base: { snapshot: base, origin: 'reducer' },
      })
      .then((s) => {
        this.inFlight.written(s);
        return s;
      });
  }

  /**
   * Runs the handler of `task`, which `s` dispatched, and writes its result; resolves with how the
   * handler ended. The task was counted when dispatched: this ends it, after the write's report.
   */
  async runTask(call: Work, s: Snapshot, task: TaskState): Promise<'completed' | 'failed'> {
    try {
      // A child workflow's task is the runner's own effect; a failure is left to the task's deadline.
      if (task.handler === CHILD_HANDLER) {
        await this.parts.children?.run(s, task, this.report(call));
        return 'completed';
      }
      const definition = this.parts.registry.forSnapshot(s);
      const handler = this.parts.handlers[task.handler]!;
      let r: TaskResult;
      // `ctx.heartbeat` when the runner has handler heartbeats; else the lease only learns the handler started.
      const beats = this.parts.heartbeats;
      let heartbeat: ((details?: unknown) => void) | undefined;
      if (beats) heartbeat = beats.start(this.leases, s.id, task);
      else this.leases.started(s.id, task);
      try {
        r = await this.parts.runTask({ handler, definition, snapshot: s, task, heartbeat });
      } finally {
        // The handler settled: its result's write follows, no renewal.
        this.leases.end(s.id, task);
      }
      // Written back onto `s`, the snapshot that dispatched it: this runner's reducer made it.
      await this.writes.apply({
        id: s.id,
        event: r.event,
        onWrite: this.report(call),
        base: { snapshot: s, origin: 'reducer' },
        merge: true,
      });
      return r.outcome;
    } finally {
      this.finish(call, s, task);
    }
  }

  /** After a successful write: observers, aborts of handlers the write took away, the tasks it dispatched. */
  private written(
    call: Work,
    s: Snapshot,
    transitions: readonly LogEntry[],
    before: number,
    dueAt: number | null,
  ): void {
    call.latest.set(s.id, s);
    if (!call.dueAt.has(s.id)) call.dueAt.set(s.id, dueAt);
    this.parts.hooks?.notify(s, transitions);
    this.parts.onWritten?.(s, transitions);
    this.observer?.(s);
    this.inFlight.written(s);
    this.leases.written(s);
    const { children } = this.parts;
    if (children?.concerns(s, transitions)) {
      const effects = children.written(s, transitions, this.report(call)).catch(ignore);
      this.inFlight.hold(effects);
      call.hold(effects);
    }
    for (const task of dispatchedBy(s, before)) {
      // Queued: written for a worker to take (this runner hands its tasks off).
      if (task.queued) continue;
      // Counted in the call and the runner until it ends: `runTask`'s end, or the job's. Its lease
      // is renewed until then, whether it runs at once or waits in a worker's pool.
      call.enter();
      this.inFlight.enter();
      this.leases.hold(s, task);
      // A worker's pool runs it when it has room; else it runs now (a result that cannot be
      // written is left to the task's deadline, which dispatches it again).
      if (this.executor) this.executor(s, task, call);
      else this.runTask(call, s, task).catch(ignore);
    }
  }
}
