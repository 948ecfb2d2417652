import type { WorkflowEvent } from '../events.js';
import type { ErrorInfo, ParentRef, Snapshot, TaskState } from '../snapshot.js';

// The runner's tracing seam. The engine knows no tracing library: it calls these around-hooks, and
// a package such as @stepfold/otel turns them into spans. Without an `instrument` the runner does
// not call anything, so the hot path pays one property check.

/** The workflow of an instance: its name and version. */
export interface WorkflowRef {
  readonly name: string;
  readonly version: number;
}

/** One event the runner is about to apply to a stored instance (a start, a handler result, a tick...). */
export interface EventInfo {
  readonly instanceId: string;
  /** The event's type; a start written together with a signal (`startIfMissing`) is `start`. */
  readonly type: WorkflowEvent['type'];
  readonly workflow: WorkflowRef;
  /** The version the event is applied to (0 for a new instance); a conflict may move it, see {@link EventOutcome}. */
  readonly version: number;
  /**
   * The instance's trace carrier (`snapshot.trace`). For a start, the carrier is made inside this
   * wrapper by {@link Instrumentation.carrier}, so an instance carries its start's span: undefined
   * for a top-level start; for a child's, its parent's carrier (the trace the child joins).
   */
  readonly trace?: Readonly<Record<string, string>> | undefined;
  /** For a child's start: the parent, and the step (and map item) that starts it. */
  readonly parent?: Readonly<ParentRef> | undefined;
}

/** What writing one event did. */
export interface EventOutcome {
  /** The stored snapshot after the event: `snapshot.version` is the version written. */
  readonly snapshot: Snapshot;
  /** False when the event did not apply (a duplicate, a stale result): nothing was written. */
  readonly applied: boolean;
  /** The version the event was finally applied to (0 for a new instance; `snapshot.version` if nothing was written). */
  readonly versionBefore: number;
}

/** One attempt of a handler the runner is about to run: the task as dispatched, and its instance. */
export interface TaskInfo extends Readonly<TaskState> {
  readonly instanceId: string;
  readonly workflow: WorkflowRef;
  /** The trace carrier of the snapshot that dispatched the task: the attempt's span continues it. */
  readonly trace: Readonly<Record<string, string>> | undefined;
}

/** How a handler attempt ended: returned, or failed (it threw, or its output broke the declared schema). */
export type TaskOutcome =
  | { readonly outcome: 'completed' }
  | {
      readonly outcome: 'failed';
      /** The failure as the snapshot records it. */
      readonly error: ErrorInfo;
      /** What the handler threw (absent for an output that did not match its schema). */
      readonly cause?: unknown | undefined;
    };

/**
 * Around-hooks a runner calls (`createRunner({ instrument })`): each wraps the work it is given and
 * must return that work's result (or rethrow its error) unchanged. Work runs inside the wrapper's
 * callback, so an async context the wrapper sets (an active span) is active in a handler.
 *
 * @example
 * const instrument: Instrumentation = {
 *   carrier: () => undefined,
 *   event: async (info, write) => write(),
 *   async task(info, run) {
 *     const t0 = Date.now();
 *     const r = await run();
 *     console.log(info.step, info.attempt, r.outcome, Date.now() - t0);
 *     return r;
 *   },
 * };
 */
export interface Instrumentation {
  /**
   * The active trace as string entries (≤ 8, each ≤ 512 characters), called on `start` (and
   * `signal` with `startIfMissing`, and a child's start) inside the start's `event` wrapper, so a
   * span that wrapper made active is the one carried: it becomes the start event's `trace`, then
   * `snapshot.trace`. A child given none keeps its parent's.
   */
  carrier(): Record<string, string> | undefined;
  /**
   * Wraps applying one event: reduce, conditional save (reload and retry on a conflict), the
   * handler runs it dispatches. Resolve with the very object `write` resolved with.
   */
  event(info: EventInfo, write: () => Promise<EventOutcome>): Promise<EventOutcome>;
  /**
   * Wraps one handler attempt; `run` calls the handler and resolves with how it ended (it does
   * not reject for a handler's error). Resolve with the very object `run` resolved with.
   */
  task(info: TaskInfo, run: () => Promise<TaskOutcome>): Promise<TaskOutcome>;
}
