import type { EventOf } from '../events.js';
import { rejectEvent } from '../events.js';
import type { ErrorInfo, TaskState } from '../snapshot.js';
import { compensationFailed, compensationSucceeded, detachedResult, failStep } from './compensation.js';
import { advance } from './flow.js';
import { backoffMs, resolveRetry, shouldRetry } from './retry-policy.js';
import {
  addTimer,
  type Cx,
  finish,
  log,
  pushCompleted,
  stepState,
  taskDef,
  taskKey,
} from './transition-context.js';

type ResultEvent = EventOf<'task.completed'> | EventOf<'task.failed'>;

/**
 * Finds the in-flight task a result refers to. Returns null for a stale or duplicate result
 * (nothing to do) and throws `INVALID_EVENT` for a result that was never asked for.
 */
export function matchResult(cx: Cx, ev: ResultEvent): TaskState | null {
  const def = cx.wf.definition.steps[ev.step];
  if (!def) rejectEvent(`unknown step "${ev.step}"`, 'step');
  if (def.kind !== 'task') rejectEvent(`step "${ev.step}" is a ${def.kind}, not a task`, 'step');
  const phase = ev.phase ?? 'run';
  if (phase === 'compensate' && !def.compensate)
    rejectEvent(`step "${ev.step}" has no compensation`, 'phase');
  const task = cx.s.tasks[taskKey(ev.step, phase)];
  // Attempts restart at 1 on every loop iteration and run: only the idempotency key tells a
  // zombie's result for an earlier execution from the current attempt with the same number.
  if (ev.key !== undefined && task?.idempotencyKey !== ev.key) return null;
  if (task && task.attempt === ev.attempt) return task;
  const st = cx.s.steps[ev.step];
  const highest = (phase === 'run' ? st?.attempt : st?.compensation?.attempt) ?? 0;
  if (ev.attempt > highest) {
    rejectEvent(`attempt ${ev.attempt} of step "${ev.step}" (${phase}) was never dispatched`, 'attempt');
  }
  return null;
}

/** Applies a matched result: advance, retry, or hand the failure to the failure policy. */
export function applyResult(cx: Cx, task: TaskState, ev: ResultEvent): void {
  delete cx.s.tasks[taskKey(task.step, task.phase)];
  if (ev.type === 'task.completed') {
    if (task.phase === 'compensate') compensationSucceeded(cx, task.step);
    else if (task.detached) detachedResult(cx, task.step, true, ev.output);
    else {
      finish(cx, task.step, 'completed', ev.output ?? null);
      pushCompleted(cx, task.step);
      log(cx, 'step.completed', task.step, { attempt: task.attempt });
      advance(cx, task.step);
    }
    return;
  }
  attemptFailed(cx, task, ev.error, false);
}

/**
 * One attempt failed (or missed its deadline). Retries per policy — after a backoff timer, or at
 * once for a lost attempt whose deadline already cost the wait — else gives up.
 */
export function attemptFailed(cx: Cx, task: TaskState, error: ErrorInfo, immediate: boolean): void {
  const { step, phase } = task;
  if (task.detached) {
    detachedResult(cx, step, false, undefined, error);
    return;
  }
  const st = stepState(cx, step);
  const def = taskDef(cx, step);
  const policy = resolveRetry(def.retry, cx.wf.definition.defaults?.retry);
  const base = (phase === 'run' ? st.attemptBase : st.compensation?.attemptBase) ?? 0;
  const detail = `${error.code ? `${error.code}: ` : ''}${error.message}`;
  if (phase === 'run') st.error = error;
  else st.compensation = { ...st.compensation!, error };
  log(cx, phase === 'run' ? 'task.failed' : 'compensation.failed', step, { attempt: task.attempt, detail });
  if (shouldRetry(policy, task.attempt - base, error)) {
    const delay = immediate ? 0 : backoffMs(policy, cx.s.id, step, task.attempt - base);
    addTimer(cx, { kind: 'retry', step, phase, at: cx.at + delay });
    log(cx, 'task.retry-scheduled', step, { attempt: task.attempt + 1, detail: `in ${delay} ms` });
    return;
  }
  if (phase === 'run') failStep(cx, step, error);
  else compensationFailed(cx, step, error);
}
