import { dispatchedBy } from '../reducer/task-view.js';
import { CHILD_HANDLER, type LogEntry, type Snapshot, type TaskState } from '../snapshot.js';
import type { ChildEffectsPort } from './child-port.js';
import type { RunTask } from './execute-task.js';
import type { Handler } from './handler-types.js';
import { notifyHooks, type RunnerHooks } from './hooks.js';
import type { InFlight } from './in-flight.js';
import type { RunnerCore, TaskHand } from './port.js';
import type { WorkflowRegistry } from './registry.js';
import type { Work } from './work.js';
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
  hooks?: RunnerHooks | undefined;
  onWritten?: ((snapshot: Snapshot, transitions: readonly LogEntry[]) => void) | undefined;
  /** The runner's side of child workflows, when a kind set brings them. */
  children?: ChildEffectsPort | undefined;
}

/**
 * What follows each write a runner makes: its observers, the child effects it asks for, and the
 * tasks it dispatched, run at once or handed to the worker attached. It is the core a runner lends
 * a worker ({@link RunnerCore}): the worker drives the same writes and tasks through it.
 */
export class WriteEffects implements RunnerCore {
  readonly writes: WriteLoop;
  readonly inFlight: InFlight;
  private executor: TaskHand | undefined;
  private observer: ((s: Snapshot) => void) | undefined;

  constructor(private readonly parts: WriteEffectsParts) {
    this.writes = parts.writes;
    this.inFlight = parts.inFlight;
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

  /** Ends one task counted in `call` and the runner (run, dropped, or given back). */
  finish(call: Work): void {
    call.leave();
    this.inFlight.leave();
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
      const r = await this.parts.runTask({ handler, definition, snapshot: s, task });
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
      this.finish(call);
    }
  }

  /** Hands every dispatched task to `hand` and every snapshot written to `observe`; returns the detach. */
  attach(hand: TaskHand, observe?: (snapshot: Snapshot) => void): () => void {
    if (this.executor) throw new Error('this runner already has an executor (one worker per runner)');
    this.executor = hand;
    this.observer = observe;
    return () => {
      if (this.executor !== hand) return;
      this.executor = undefined;
      this.observer = undefined;
    };
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
    notifyHooks(this.parts.hooks, s, transitions);
    this.parts.onWritten?.(s, transitions);
    this.observer?.(s);
    this.inFlight.written(s);
    const { children } = this.parts;
    if (children?.concerns(s, transitions)) {
      const effects = children.written(s, transitions, this.report(call)).catch(ignore);
      this.inFlight.hold(effects);
      call.hold(effects);
    }
    for (const task of dispatchedBy(s, before)) {
      // Queued: written for a worker to take (this runner hands its tasks off).
      if (task.queued) continue;
      // Counted in the call and the runner until it ends: `runTask`'s end, or the job's.
      call.enter();
      this.inFlight.enter();
      // A worker's pool runs it when it has room; else it runs now (a result that cannot be
      // written is left to the task's deadline, which dispatches it again).
      if (this.executor) this.executor(s, task, call);
      else this.runTask(call, s, task).catch(ignore);
    }
  }
}
