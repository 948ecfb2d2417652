import {
  type Cx,
  deactivate,
  dispatchTask,
  finish,
  log,
  stepDef,
  stepError,
  stepState,
  terminate,
} from './context.js';
import type { FailurePolicy } from './definition-schema.js';
import type { ErrorInfo } from './snapshot.js';

const SAVEPOINT = 'savepoint:';

/** Whether a pivot task has completed in this run: from then on nothing rolls back (SPEC §6). */
function pivotPassed(cx: Cx): boolean {
  return cx.wf.pivots.some((p) => cx.s.steps[p]?.status === 'completed');
}

/** Which policy governs a failure of this step. */
export function failurePolicy(cx: Cx, id: string): FailurePolicy {
  if (pivotPassed(cx)) return 'dlq';
  const def = stepDef(cx, id);
  return (def.kind === 'task' ? def.onFailure : undefined) ?? cx.wf.definition.onFailure ?? 'compensate';
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
  const def = stepDef(cx, id);
  startRollback(
    cx,
    'fail',
    def.kind === 'task' && def.compensateOnFailure && def.compensate ? id : undefined,
  );
}

/** Completed steps to compensate, latest first: back to the last savepoint, or all for a cancel. */
function rollbackTargets(cx: Cx, mode: 'fail' | 'cancel'): string[] {
  const out: string[] = [];
  for (let i = cx.s.completed.length - 1; i >= 0; i--) {
    const entry = cx.s.completed[i]!;
    if (entry.startsWith(SAVEPOINT)) {
      if (mode === 'fail') break;
      continue;
    }
    const def = stepDef(cx, entry);
    if (def.kind === 'task' && def.compensate && cx.s.steps[entry]?.status === 'completed') out.push(entry);
  }
  return out;
}

/**
 * Stops forward progress and starts compensating. Undispatched work is skipped; handlers already
 * running are detached and compensated if they still complete. A cancel during a failure's
 * rollback widens it past savepoints.
 */
export function startRollback(cx: Cx, mode: 'fail' | 'cancel', failedStep?: string): void {
  for (const id of [...cx.s.active]) deactivate(cx, id);
  for (const st of Object.values(cx.s.steps)) {
    if (st.status === 'dlq') st.status = 'failed';
    // A cancel retries a compensation parked in dlq with fresh attempts.
    if (mode === 'cancel' && st.status === 'compensation-dlq') {
      st.status = 'completed';
      st.compensation = {
        attempt: st.compensation?.attempt ?? 0,
        attemptBase: st.compensation?.attempt ?? 0,
      };
    }
  }
  const queued = new Set(cx.s.saga?.queue ?? []);
  const queue = [...(cx.s.saga?.queue ?? [])];
  if (failedStep) queue.unshift(failedStep);
  for (const id of rollbackTargets(cx, mode)) if (!queued.has(id) && id !== failedStep) queue.push(id);
  cx.s.saga = { mode, queue };
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
  const next = saga.queue.shift();
  if (next !== undefined) {
    const st = stepState(cx, next);
    st.status = 'compensating';
    dispatchTask(cx, next, 'compensate', (st.compensation?.attempt ?? 0) + 1);
    return;
  }
  // Wait for detached handlers: one that still completes must be compensated before we finish.
  if (tasks.some((t) => t.detached)) return;
  terminate(cx, saga.mode === 'cancel' ? 'cancelled' : 'failed');
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
    const def = stepDef(cx, id);
    if (cx.s.saga && def.kind === 'task' && def.compensate) cx.s.saga.queue.unshift(id);
  } else {
    st.status = 'failed';
    st.finishedAt = cx.at;
    if (error) st.error = error;
  }
  pumpRollback(cx);
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
