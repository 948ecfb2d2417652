import type { EventOf } from '../events.js';
import type { ErrorInfo, TaskState } from '../snapshot.js';
import type { Cx } from './kinds/step-rules.js';

// Leases of running attempts. A task's `deadline` bounds how long its handler may run (minutes);
// its lease bounds how long its runner may stay silent (seconds). The runner renews the lease of
// every handler it still runs (`task.heartbeat`), so an attempt whose lease lapses was left by a
// runner that died: the due poll finds it like a missed deadline and it is retried at once.

/** Default lease of a running attempt when the reducer is given none (`StepOptions.leaseMs`): 10 s. */
export const DEFAULT_TASK_LEASE_MS = 10_000;

/** The lease a running attempt gets (the reduce option, else the default). */
export function leaseMs(cx: Cx): number {
  return cx.leaseMs ?? DEFAULT_TASK_LEASE_MS;
}

/** The lease of the attempt `task` from now: its step's `heartbeatMs` when it has one, else the runner's. */
export function attemptLeaseMs(cx: Cx, task: Pick<TaskState, 'heartbeatMs'>): number {
  return task.heartbeatMs ?? leaseMs(cx);
}

/**
 * When a task in flight is due: its deadline, or its lease's end when that comes first. The
 * instance's `wakeAt` counts this, and a tick fires the task once it has passed.
 */
export function taskDue(t: TaskState): number {
  const lease = t.leaseUntil;
  return lease !== undefined && lease < t.deadline ? lease : t.deadline;
}

/**
 * Whether the attempt `t` starts running now, so it holds a lease: not one queued for a worker
 * (no one runs it yet) nor a child's task (the child instance, not a handler, is what runs; the
 * child reports its end, and the task's deadline checks on it).
 */
export function leased(t: Pick<TaskState, 'queued' | 'child'>): boolean {
  return t.queued !== true && t.child === undefined;
}

/**
 * Why a task that fell due is lost: its deadline passed (`TIMEOUT`), or only its lease lapsed:
 * `LEASE_LOST` (its runner stopped renewing it, most likely it died), or for a step with
 * `heartbeatMs` `HEARTBEAT_TIMEOUT` (its handler went silent: hung, or its process died).
 */
export function lostError(cx: Cx, task: TaskState): ErrorInfo {
  const lapsed = task.deadline > cx.at && task.leaseUntil !== undefined && task.leaseUntil <= cx.at;
  if (lapsed && task.heartbeatMs !== undefined)
    return {
      message: `handler sent no heartbeat for ${task.heartbeatMs} ms (it hung, or its runner died)`,
      code: 'HEARTBEAT_TIMEOUT',
      retryable: true,
    };
  if (lapsed)
    return {
      message: 'handler lease lapsed (its runner stopped renewing it)',
      code: 'LEASE_LOST',
      retryable: true,
    };
  return { message: 'handler missed its deadline', code: 'TIMEOUT', retryable: true };
}

/**
 * Whether a heartbeat from the runner of an attempt renews `task`: only the attempt running (not
 * queued, not a child's, not replaced, same key), and only when its lease would end later than it
 * does or it brings details.
 */
export function renews(cx: Cx, task: TaskState, ev: EventOf<'task.heartbeat'>): boolean {
  if (task.leaseUntil === undefined || task.attempt !== ev.attempt) return false;
  if (ev.key !== undefined && ev.key !== task.idempotencyKey) return false;
  return cx.at + attemptLeaseMs(cx, task) > task.leaseUntil || ev.details !== undefined;
}

/**
 * Whether an attempt in flight is overdue at `now`: running (not queued for a worker) past its
 * deadline or its lease, so the next due poll will retry it. What the CLI and the inspector mark.
 *
 * @example
 * const stuck = Object.values(snapshot.tasks).filter((t) => attemptOverdue(t, Date.now()));
 */
export function attemptOverdue(t: TaskState, now: number): boolean {
  return t.queued !== true && taskDue(t) <= now;
}
