import { kindOf } from '../definition/kinds/index.js';
import { completedPivotOf } from '../definition/pivots.js';
import type { FailurePolicy } from '../definition/schema.js';
import type { ErrorInfo } from '../snapshot.js';
import { rulesOf } from './kind-table.js';
import {
  type Cx,
  deactivate,
  dispatchTask,
  finish,
  log,
  stepDef,
  stepError,
  stepState,
  taskKey,
  terminate,
} from './transition-context.js';

/** Prefix of a passed savepoint's marker in `snapshot.completed`. */
export const SAVEPOINT = 'savepoint:';

/** Whether a pivot task has completed in this run: from then on nothing rolls back. */
export function pivotPassed(cx: Cx): boolean {
  return passedPivot(cx) !== undefined;
}

/**
 * The first pivot that has completed in this run, if any: a pivot step of this workflow, or a child
 * step (or a workflow map's item) whose child completed past a pivot of its own.
 */
export function passedPivot(cx: Cx): string | undefined {
  return completedPivotOf(cx.wf, cx.s);
}

/** Which policy governs a failure of this step. */
export function failurePolicy(cx: Cx, id: string): FailurePolicy {
  if (pivotPassed(cx)) return 'dlq';
  const def = stepDef(cx, id);
  return kindOf(def).failurePolicy?.(def) ?? cx.wf.definition.onFailure ?? 'compensate';
}

/** A step failed for good: apply its failure policy (dlq, fail at once, or roll back). */
export function failStep(cx: Cx, id: string, error: ErrorInfo, policy = failurePolicy(cx, id)): void {
  const st = stepState(cx, id);
  finish(cx, id, policy === 'dlq' ? 'dlq' : 'failed');
  st.error = error;
  cx.s.error = stepError(error, id);
  log(cx, policy === 'dlq' ? 'step.dlq' : 'step.failed', id, { detail: error.message });
  if (policy === 'dlq') return;
  if (policy === 'fail') {
    terminate(cx, 'failed');
    return;
  }
  startRollback(cx, 'fail', id);
}

/** The handler that undoes a step, if its kind and definition have one. */
export function compensator(cx: Cx, id: string): string | undefined {
  const def = stepDef(cx, id);
  return kindOf(def).compensator?.(def);
}

/** Whether a failed step opted in to being compensated (it may have left partial effects). */
function compensatesOnFailure(cx: Cx, id: string): boolean {
  const def = stepDef(cx, id);
  return kindOf(def).compensatesOnFailure?.(def) === true;
}

/** Whether a savepoint encloses the failed step: top level, or in one of its enclosing branches. */
function guards(cx: Cx, savepoint: string, failed: string | undefined): boolean {
  const outer = cx.wf.regions.get(savepoint) ?? [];
  const inner = failed === undefined ? [] : (cx.wf.regions.get(failed) ?? []);
  return outer.every((r, i) => r.parallel === inner[i]?.parallel && r.branch === inner[i]?.branch);
}

/**
 * Completed steps to compensate, latest first: back to the latest passed savepoint that encloses
 * the failed step (a savepoint inside a sibling branch does not stop it), or all for a cancel.
 */
function rollbackTargets(cx: Cx, mode: 'fail' | 'cancel', failed?: string): string[] {
  const out: string[] = [];
  for (let i = cx.s.completed.length - 1; i >= 0; i--) {
    const entry = cx.s.completed[i]!;
    if (entry.startsWith(SAVEPOINT)) {
      if (mode === 'fail' && guards(cx, entry.slice(SAVEPOINT.length), failed)) break;
      continue;
    }
    if (compensator(cx, entry) !== undefined && UNDO.has(cx.s.steps[entry]?.status ?? '')) out.push(entry);
  }
  return out;
}

// Statuses of a step that has completed (in this or, for loops, an earlier iteration) and has
// nothing in flight. An in-flight later iteration is queued when its handler reports back.
const UNDO = new Set(['completed', 'skipped', 'failed']);

/** Steps ordered latest completion first; failed steps (never completed) lead. */
function latestFirst(cx: Cx, ids: Iterable<string>): string[] {
  const rank = (id: string) => {
    const i = cx.s.completed.indexOf(id);
    return i < 0 ? Number.POSITIVE_INFINITY : i;
  };
  return [...ids].sort((a, b) => rank(b) - rank(a));
}

/**
 * Stops forward progress and starts compensating. Undispatched work is skipped; handlers already
 * running are detached and compensated if they still complete. Failed steps that opt in are
 * compensated too. A cancel during a failure's rollback widens it past savepoints and retries a
 * compensation parked in dlq with fresh attempts.
 */
export function startRollback(cx: Cx, mode: 'fail' | 'cancel', failedStep?: string): void {
  const queue = new Set(cx.s.saga?.queue ?? []);
  for (const id of [...cx.s.active]) {
    // A step waiting to retry has failed at least once: compensated if it opted in. So is a map
    // part way through its items.
    const retrying = !cx.s.tasks[taskKey(id, 'run')] && (cx.s.steps[id]?.attempt ?? 0) > 0;
    const partial = (cx.s.steps[id]?.map?.ok ?? 0) > 0;
    deactivate(cx, id);
    if ((retrying || partial) && compensatesOnFailure(cx, id)) queue.add(id);
  }
  if (failedStep !== undefined && compensatesOnFailure(cx, failedStep)) queue.add(failedStep);
  for (const [id, st] of Object.entries(cx.s.steps)) {
    if (st.status === 'dlq') {
      st.status = 'failed';
      if (compensatesOnFailure(cx, id)) queue.add(id);
    }
    if (mode === 'cancel' && st.status === 'compensation-dlq') {
      const attempt = st.compensation?.attempt ?? 0;
      st.status = cx.s.completed.includes(id) ? 'completed' : 'failed';
      st.compensation = { attempt, attemptBase: attempt };
      delete cx.s.compensationError;
      queue.add(id);
    }
  }
  for (const id of rollbackTargets(cx, mode, failedStep)) queue.add(id);
  cx.s.saga = { mode, queue: latestFirst(cx, queue) };
  log(cx, 'compensation.started', undefined, { detail: mode });
  pumpRollback(cx);
}

/** Moves the rollback forward: one compensation at a time, then the final status. */
export function pumpRollback(cx: Cx): void {
  const saga = cx.s.saga;
  if (!saga) return;
  const tasks = Object.values(cx.s.tasks);
  if (tasks.some((t) => t.phase === 'compensate')) return;
  if (cx.s.timers.some((t) => t.phase === 'compensate')) return;
  if (Object.values(cx.s.steps).some((st) => st.status === 'compensation-dlq')) return;
  // A pivot completed during the rollback (a sibling branch's handler, detached when it began):
  // what it did stands, so nothing done before it is undone any more; the rollback ends here.
  const pivot = saga.queue.length ? passedPivot(cx) : undefined;
  if (pivot !== undefined) {
    saga.queue = [];
    log(cx, 'compensation.stopped', pivot, { detail: 'pivot completed' });
  }
  const next = saga.queue.shift();
  if (next !== undefined) {
    const st = stepState(cx, next);
    st.status = 'compensating';
    if (!dispatchCompensation(cx, next, (st.compensation?.attempt ?? 0) + 1)) pumpRollback(cx);
    return;
  }
  // Wait for detached handlers: one that still completes must be compensated before we finish.
  if (tasks.some((t) => t.detached)) return;
  terminate(cx, saga.mode === 'cancel' ? 'cancelled' : 'failed');
}

/**
 * Dispatches the next compensation of a step: its compensation task, or what its kind's own rule
 * dispatches (a map's next completed item). False when the kind finds nothing left to undo: the
 * step is compensated.
 */
export function dispatchCompensation(cx: Cx, id: string, attempt: number, retry = false): boolean {
  const def = stepDef(cx, id);
  const own = rulesOf(cx, def).compensate;
  if (own) return own(cx, def, attempt, retry);
  dispatchTask(cx, id, 'compensate', attempt, { handler: compensator(cx, id) });
  return true;
}

/** A detached handler reported back during or after a rollback. */
export function detachedResult(cx: Cx, id: string, ok: boolean, output: unknown, error?: ErrorInfo): void {
  const st = stepState(cx, id);
  if (ok) {
    st.status = 'completed';
    st.finishedAt = cx.at;
    if (output !== undefined) st.output = output;
    const i = cx.s.completed.indexOf(id);
    if (i >= 0) cx.s.completed.splice(i, 1);
    cx.s.completed.push(id);
    log(cx, 'step.completed', id, { attempt: st.attempt, detail: 'late' });
    if (cx.s.saga && compensator(cx, id) !== undefined) queueOnce(cx, id);
  } else {
    st.status = 'failed';
    st.finishedAt = cx.at;
    if (error) st.error = error;
    // Compensated if it opted in, or if an earlier loop iteration completed.
    const earlier = compensator(cx, id) !== undefined && cx.s.completed.includes(id);
    if (cx.s.saga && (earlier || compensatesOnFailure(cx, id))) queueOnce(cx, id);
  }
  pumpRollback(cx);
}

export function queueOnce(cx: Cx, id: string): void {
  if (!cx.s.saga!.queue.includes(id)) cx.s.saga!.queue.unshift(id);
}

/** A compensation handler finished. */
export function compensationSucceeded(cx: Cx, id: string): void {
  stepState(cx, id).status = 'compensated';
  log(cx, 'compensation.completed', id);
  pumpRollback(cx);
}

/** A compensation handler failed for good: the instance waits in dlq with both errors. */
export function compensationFailed(cx: Cx, id: string, error: ErrorInfo): void {
  const st = stepState(cx, id);
  st.status = 'compensation-dlq';
  st.compensation = { ...st.compensation, attempt: st.compensation?.attempt ?? 0, error };
  cx.s.compensationError = stepError(error, id);
  log(cx, 'compensation.dlq', id, { detail: error.message });
}
