import type { StepErrorCode } from './errors.js';
import type { FlowNeed } from './flow-need.js';
import type { SearchValue } from './search.js';

/** Snapshot format version; bump with a migration when the shape below changes. */
export const SNAPSHOT_SCHEMA_VERSION = 1;

/** Instance status. Terminal: completed, failed, cancelled, aborted; `dlq` waits for a requeue. */
export type Status =
  | 'running'
  | 'waiting'
  | 'compensating'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'aborted'
  | 'dlq';

/** A status after which no event applies: how an instance finished. */
export type FinishedStatus = 'completed' | 'failed' | 'cancelled' | 'aborted';

/** Statuses after which no event applies. */
export const TERMINAL_STATUSES: readonly Status[] = ['completed', 'failed', 'cancelled', 'aborted'];

/** `status` when it is a finished one (a store reading a row's status column), else undefined. */
export function finishedStatus(status: unknown): FinishedStatus | undefined {
  return TERMINAL_STATUSES.find((t) => t === status) as FinishedStatus | undefined;
}

/** True when no further event can change an instance in this status. */
export function isTerminal(status: Status): status is FinishedStatus {
  return TERMINAL_STATUSES.includes(status);
}

/** A failure as recorded in a snapshot. */
export interface ErrorInfo {
  message: string;
  /** One of the engine's {@link StepErrorCode}s, or the code a handler threw. */
  code?: StepErrorCode | (string & {}) | undefined;
  retryable?: boolean | undefined;
  step?: string | undefined;
}

/** Status of one step within the current run. */
export type StepStatus =
  | 'active'
  | 'completed'
  | 'failed'
  | 'skipped'
  | 'dlq'
  | 'compensating'
  | 'compensated'
  | 'compensation-dlq';

/** Per-step state; loops overwrite it, so it does not grow with iterations. */
export interface StepState {
  status: StepStatus;
  /** How many times the step has been entered in this run (1 on first entry). */
  iteration: number;
  /** Attempt number of the latest forward dispatch (0 for steps that run no handler). */
  attempt: number;
  startedAt: number;
  finishedAt?: number | undefined;
  output?: unknown | undefined;
  error?: ErrorInfo | undefined;
  /** Attempts and last error of this step's compensation handler (and its handler's last heartbeat details). */
  compensation?:
    | { attempt: number; attemptBase?: number; error?: ErrorInfo; heartbeatDetails?: unknown }
    | undefined;
  /** Attempts made before the latest requeue; retry limits count from here. */
  attemptBase?: number | undefined;
  /**
   * Task steps: the details of the latest `ctx.heartbeat(details)` of this execution's attempts,
   * which the next attempt reads as `ctx.heartbeatDetails`. Dropped when the step completes.
   */
  heartbeatDetails?: unknown;
  /** Parallel steps: the state of each branch, by index. */
  branches?: BranchStatus[] | undefined;
  /** Collect steps: the items gathered so far and when gathering began. */
  batch?: { items: unknown[]; since: number; lastAt: number; keys: string[] } | undefined;
  /** Child steps: the child instance this iteration started, and whether it passed a pivot. */
  child?: ChildState | undefined;
  /** Map steps: progress over the items (O(`maxConcurrency`), whatever the item count). */
  map?: MapState | undefined;
  /**
   * The step's latest attempt (a map's latest item) is waiting for a limit the store could not
   * grant: which one, until when at the latest (a freed slot wakes it earlier), since when.
   */
  throttled?: ThrottledState | undefined;
}

/**
 * An attempt (or an instance's admission) waiting for a flow limit: the need the store could not
 * meet, the latest time it is retried (`until`; a release wakes it earlier), and when it first waited.
 */
export interface ThrottledState {
  need: FlowNeed;
  until: number;
  since: number;
  /** The attempt that waits (tasks only; it is not consumed: the same attempt runs once granted). */
  attempt?: number | undefined;
  /** Map steps: the item that waits. */
  item?: number | undefined;
}

/** Instance limits of the workflow not granted yet: no step was entered. */
export interface AdmissionState {
  needs: FlowNeed[];
  /** The store could not grant them: retried by a tick (a released slot ticks the instance). */
  throttled?: ThrottledState | undefined;
  /** When the admission first waited, kept while it is retried. */
  waitingSince?: number | undefined;
}

/** The child instance of a child step: its id, and whether it completed past one of its pivots. */
export interface ChildState {
  id: string;
  /** The child completed a pivot: what it did stands, so nothing before this step rolls back. */
  pivot?: true | undefined;
}

/**
 * Progress of a map step. Items are dispatched in index order: every index below `next` that is
 * neither `running` nor `failed` has completed, so the state stays O(`maxConcurrency`) (plus the
 * tolerated failures) whatever the number of items.
 */
export interface MapState {
  total: number;
  /** The next index to dispatch. */
  next: number;
  /** Indexes dispatched and not yet finished (including those waiting to retry). */
  running: number[];
  /** Indexes that failed for good (tolerated, or the one that failed the step). */
  failed: number[];
  /** How many items completed. */
  ok: number;
  /** An item's result met the step's `until`: no further index is dispatched. */
  stopped?: boolean | undefined;
  /**
   * During rollback: the item being compensated, then those that completed late (after the walk
   * down the indexes passed them), next first. O(`maxConcurrency`).
   */
  undo?: number[] | undefined;
  /** During rollback: the completed indexes below this are compensated after `undo`, latest first. */
  undoBelow?: number | undefined;
  /** Completed items a rollback has undone so far (compensated, or their children reverted). */
  undone?: number | undefined;
  /** An item (a child workflow) completed past one of its pivots. */
  pivot?: true | undefined;
}

/** State of one branch of a parallel step. */
export type BranchStatus = 'running' | 'done' | 'failed' | 'abandoned';

/** A handler run the snapshot has handed out: whoever wrote this version runs it. */
export interface TaskState {
  step: string;
  phase: 'run' | 'compensate';
  attempt: number;
  /** Stable across attempts of one step execution: `instance/run/step/iteration` (map items add `/index`). */
  idempotencyKey: string;
  /** Map steps: the item this task runs (its key in `tasks` is `step[item]`). */
  item?: number | undefined;
  /**
   * Child steps (and map items that are workflows): the child instance. Its handler is
   * {@link CHILD_HANDLER}, an effect the runner performs: start the child (or find it started),
   * cancel it once the task is detached, or revert it for a compensation.
   */
  child?: string | undefined;
  handler: string;
  dispatchedAt: number;
  /** Epoch ms after which the attempt counts as lost and is re-dispatched. */
  deadline: number;
  /**
   * Epoch ms until which the attempt's runner is known to run it: set when it starts running (the
   * dispatch that runs it, the tick that takes a queued one) to that time plus the lease, and moved
   * on by the runner's `task.heartbeat`s while its handler runs. Once it lapses before `deadline`
   * the attempt is lost (`LEASE_LOST`) and retried. Absent on a queued task and a child's task.
   */
  leaseUntil?: number | undefined;
  /**
   * The step's `heartbeatMs`: the lease follows the handler's heartbeats (`ctx.heartbeat`), each
   * moving `leaseUntil` to its time plus this, not the runner's renewals; a handler silent that
   * long is lost (`HEARTBEAT_TIMEOUT`). Kept on the attempt, so a new definition does not change it.
   */
  heartbeatMs?: number | undefined;
  /** Snapshot version whose write dispatched this attempt. */
  dispatchVersion: number;
  /** Set when the path that dispatched the task was abandoned; its result is kept for rollback only. */
  detached?: boolean | undefined;
  /**
   * Handed off, not yet taken: its writer does not run it. The instance is due at once (`deadline`
   * is the dispatch time) and the tick that takes it gives it a real deadline, same attempt.
   */
  queued?: boolean | undefined;
  /**
   * Times this attempt was given back unstarted (`task.released`: a worker stopping, or one whose
   * queue held it until its deadline was near). A worker gives one attempt back only a few times;
   * then it runs it however near its deadline is.
   */
  releases?: number | undefined;
  /**
   * Flow limits this attempt needs before it may run (its step's `concurrency` and `rateLimit`,
   * resolved): the runner acquires them from the store before it saves the dispatch.
   */
  needs?: FlowNeed[] | undefined;
  /** A throttled attempt dispatched again: when it first waited (kept if it waits again). */
  waitingSince?: number | undefined;
}

/** A durable timer: a retry backoff, a sleep, or a wait's timeout. */
export interface TimerState {
  /** `throttle`: a throttled attempt is retried (any tick retries it earlier: `at` is the poll fallback). */
  kind: 'retry' | 'sleep' | 'timeout' | 'idle' | 'max-wait' | 'throttle';
  step: string;
  at: number;
  phase?: 'run' | 'compensate' | undefined;
  /** Map steps: the item a retry timer is for, and the attempt that failed. */
  item?: number | undefined;
  attempt?: number | undefined;
  /** `throttle`: the version that dispatched the waiting attempt (with the attempt, its holder in the store's counts). */
  dispatchVersion?: number | undefined;
  /** `throttle`: the need the attempt waits on, where the store recorded it as a waiter (absent in older snapshots). */
  need?: FlowNeed | undefined;
}

/** A buffered signal nobody has consumed yet. */
export interface SignalRecord {
  name: string;
  payload: unknown;
  id?: string | undefined;
  at: number;
}

/** One line of the bounded transition log. */
export interface LogEntry {
  /** The snapshot version this transition belongs to. */
  v: number;
  at: number;
  type: string;
  step?: string | undefined;
  attempt?: number | undefined;
  detail?: string | undefined;
}

/**
 * Where a child instance reports its end: the parent instance, its step, and the idempotency key
 * of the task that started it (a map item's includes its index). Kept through continue-as-new.
 */
export interface ParentRef {
  id: string;
  workflow: string;
  step: string;
  key: string;
  item?: number | undefined;
  /** Set by `revert`: the end the child now reaches answers the parent's compensation. */
  phase?: 'compensate' | undefined;
}

/**
 * The schedule slot a run was started for, set by a schedule's fire (`@stepfold/engine/schedules`).
 * Its handlers read it as `ctx.schedule`. Kept through continue-as-new.
 */
export interface ScheduledFor {
  /** The schedule's id. */
  id: string;
  /** The slot's time (epoch ms). A trigger-now has no slot of its own: the time it was triggered. */
  slot: number;
  /** `slot`: the schedule's own timing; `backfill`: a backfill of past slots; `trigger`: a trigger-now. */
  how: 'slot' | 'backfill' | 'trigger';
}

/** The handler name of the runner's own effect for a child workflow (see {@link TaskState.child}). */
export const CHILD_HANDLER = '$child';

/** Rollback in progress (or finished, for dlq'd compensations). */
export interface SagaState {
  mode: 'fail' | 'cancel';
  /** Steps still to compensate, next first. */
  queue: string[];
}

/** The longest {@link Snapshot.fairKey} a store indexes, in UTF-16 units. */
export const MAX_FAIR_KEY_LENGTH = 256;

/** Whether `key` is a {@link Snapshot.fairKey} a store can index: a string of at most {@link MAX_FAIR_KEY_LENGTH} units. */
export function isFairKey(key: unknown): key is string {
  return typeof key === 'string' && key.length <= MAX_FAIR_KEY_LENGTH;
}

/** The highest {@link Snapshot.priority}: a head start of at most this many seconds of waiting. */
export const MAX_PRIORITY = 1000;

/** How much earlier one point of {@link Snapshot.priority} indexes ready work, in ms: a priority of p counts as p seconds of waiting. */
export const PRIORITY_AGING_MS = 1000;

/** Whether `p` is a {@link Snapshot.priority}: an integer from 0 to {@link MAX_PRIORITY}. */
export function isPriority(p: unknown): p is number {
  return Number.isSafeInteger(p) && (p as number) >= 0 && (p as number) <= MAX_PRIORITY;
}

/** The complete, versioned JSON state of one workflow instance. */
export interface Snapshot {
  schemaVersion: number;
  id: string;
  workflow: { name: string; version: number; hash: string };
  /** Optimistic-lock counter: +1 per accepted event. */
  version: number;
  /** Continue-as-new counter, 1 for the first run. */
  run: number;
  status: Status;
  input: unknown;
  output?: unknown | undefined;
  error?: ErrorInfo | undefined;
  /** Error of a compensation that ended in dlq, beside the original `error`. */
  compensationError?: ErrorInfo | undefined;
  /** Why the instance was cancelled or aborted. */
  reason?: string | undefined;
  /**
   * The trace the instance belongs to, from its start event (W3C `traceparent`/`tracestate` as a
   * runner's `instrument.carrier()` made it): instrumentation parents every handler run on it, in
   * any process. At most 8 short string entries; kept through continue-as-new; absent if not given.
   */
  trace?: Record<string, string> | undefined;
  /** A child instance: the parent it reports its end to. */
  parent?: ParentRef | undefined;
  /** A run a schedule started: the schedule and the slot it is for (absent otherwise). */
  schedule?: ScheduledFor | undefined;
  /**
   * The instance's fairness key, set at start from its workflow's `fairness.key` path: stores hand
   * out due work round-robin across these values (see `Store.listDue`), so one key's backlog does
   * not hold back another key's first task. A non-empty string of at most {@link MAX_FAIR_KEY_LENGTH}
   * characters; absent (or empty) puts the instance in the group of instances without one.
   */
  fairKey?: string | undefined;
  /**
   * The instance's priority, set at start (the start option, else its workflow's `priority`): an
   * integer from 0 to {@link MAX_PRIORITY}, higher first. Stores index work that is due at once
   * `priority` × {@link PRIORITY_AGING_MS} earlier than it is (see `Store.listDue`); timers keep
   * their times. Absent: 0.
   */
  priority?: number | undefined;
  /**
   * The instance's search attributes (the workflow's `search` declarations), by name: read from
   * their data paths after every event, or set by handlers (`ctx.setAttributes`). Every store indexes
   * them for `Store.list`'s `where` and `orderBy`. Absent: none has a value.
   */
  search?: Record<string, SearchValue> | undefined;
  steps: Record<string, StepState>;
  /** Step ids currently holding a cursor (running, waiting or sleeping). */
  active: string[];
  /** Completion order for rollback: step ids, and `savepoint:<id>` markers. */
  completed: string[];
  tasks: Record<string, TaskState>;
  timers: TimerState[];
  inbox: SignalRecord[];
  /** Recently seen signal ids (bounded) for deduplication. */
  seenSignals: string[];
  saga?: SagaState | undefined;
  /** The workflow's instance limits, while not granted (no step entered yet). */
  admission?: AdmissionState | undefined;
  /** The workflow's instance limits granted to this instance: the runner releases them when it ends. */
  holds?: FlowNeed[] | undefined;
  wakeAt: number | null;
  createdAt: number;
  updatedAt: number;
  log: LogEntry[];
}
