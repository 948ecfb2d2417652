import { MAX_EVENT_TIME } from '../event-time.js';
import type { WorkflowEvent } from '../events.js';
import { attemptOf, instanceHolder, taskHolder, waitingHolders } from '../flow-holders.js';
import { taskDue } from '../reducer/task-lease.js';
import { isTerminal, type Snapshot, type TaskState } from '../snapshot.js';
import type { FlowNeed } from '../store/flow.js';

// What a write asks of the store's `flow`, from the snapshot before it and after it: pure, so the
// write loop, the harness and a test all read the same answer.

/** An instance's hold has no lease of its own: it lasts until the runner releases it (the instance ends). */
export const INSTANCE_LEASE = MAX_EVENT_TIME;

/** One holder to acquire before the write is saved. */
export interface FlowAcquire {
  holder: string;
  needs: FlowNeed[];
  /** The lease the store keeps the slots for: the attempt's deadline, or {@link INSTANCE_LEASE}. */
  until: number;
  /** The attempt it is for; absent for the instance's admission. */
  task?: TaskState | undefined;
}

/** What one write changes in the store's counts. */
export interface FlowChanges {
  /** Holders this write dispatched (attempts with needs that run now; an admission asked for). */
  acquire: FlowAcquire[];
  /** Holders the write ended: attempts finished, given back or gone while waiting; an instance that ended. */
  release: string[];
  /** Holders whose lease moved (an attempt taken again with a new deadline or lease). */
  renew: Array<{ holder: string; until: number }>;
  /**
   * Waiter entries of throttled attempts this write dispatches again (a later version: a new
   * holder, running or waiting): released before the acquire, not after the save, so a release
   * that is lost (a process that dies, a Lambda that freezes) never leaves a waiter behind.
   */
  redispatched: string[];
}

/** The lease of an attempt's slots: when the attempt is due (its lease, or its deadline when sooner). */
const leaseOf = taskDue;

/** Attempts that hold (or must acquire) slots: those with needs that run, by holder. Queued ones wait for a taker. */
function running(s: Snapshot | null): Map<string, TaskState> {
  const out = new Map<string, TaskState>();
  if (!s) return out;
  for (const key in s.tasks) {
    const t = s.tasks[key]!;
    if (t.needs !== undefined && !t.queued) out.set(taskHolder(t), t);
  }
  return out;
}

/** Holders of throttled attempts (recorded as waiters in the store until they run or go). */
function waiting(s: Snapshot | null): Set<string> {
  return s ? waitingHolders(s) : new Set();
}

/**
 * What a write from `prev` (null: a new instance) to `next` asks of the store: acquire for attempts
 * with needs that run in `next` and did not in `prev`, and for an admission `next` asks for;
 * release attempts of `prev` that no longer run or wait, and the instance's hold once `next` has
 * ended; renew attempts whose lease moved.
 */
export function flowChanges(prev: Snapshot | null, next: Snapshot): FlowChanges {
  const before = running(prev);
  const after = running(next);
  const changes: FlowChanges = { acquire: [], release: [], renew: [], redispatched: [] };
  for (const [holder, task] of after) {
    const was = before.get(holder);
    if (!was) changes.acquire.push({ holder, needs: task.needs!, until: leaseOf(task), task });
    else if (leaseOf(was) !== leaseOf(task)) changes.renew.push({ holder, until: leaseOf(task) });
  }
  const stillWaiting = waiting(next);
  for (const holder of before.keys())
    if (!after.has(holder) && !stillWaiting.has(holder)) changes.release.push(holder);
  const wanted = new Set([...after.keys(), ...stillWaiting].map(attemptOf));
  for (const holder of waiting(prev)) {
    if (after.has(holder) || stillWaiting.has(holder)) continue;
    if (wanted.has(attemptOf(holder))) changes.redispatched.push(holder);
    else changes.release.push(holder);
  }
  const instance = instanceHolder(next);
  if (isTerminal(next.status)) {
    if (next.holds || prev?.holds || prev?.admission) changes.release.push(instance);
  } else if (next.admission && !next.admission.throttled) {
    changes.acquire.push({ holder: instance, needs: next.admission.needs, until: INSTANCE_LEASE });
  } else if (next.holds && !prev?.holds) {
    changes.acquire.push({ holder: instance, needs: next.holds, until: INSTANCE_LEASE });
  }
  return changes;
}

/** Whether a write may touch the store's counts at all: the cheap test that spares every other write. */
export function touchesFlow(prev: Snapshot | null, next: Snapshot): boolean {
  return limited(next) || (prev !== null && limited(prev));
}

function limited(s: Snapshot): boolean {
  if (s.admission || s.holds) return true;
  for (const key in s.tasks) if (s.tasks[key]!.needs) return true;
  for (const t of s.timers) if (t.kind === 'throttle') return true;
  return false;
}

/**
 * The event that records a refused holder: its attempt (or the admission) waits for `need`, tried
 * again at `until` at the latest (never before `now + 1`: a retry loop must not spin).
 */
export function refusalEvent(a: FlowAcquire, need: FlowNeed, until: number, now: number): WorkflowEvent {
  const at = Math.max(until, now + 1);
  const t = a.task;
  if (!t) return { type: 'instance.throttled', at: now, need, until: at };
  return {
    type: 'task.throttled',
    at: now,
    step: t.step,
    attempt: t.attempt,
    key: t.idempotencyKey,
    need,
    until: at,
    ...(t.phase === 'run' ? {} : { phase: t.phase }),
    ...(t.item === undefined ? {} : { item: t.item }),
  };
}
