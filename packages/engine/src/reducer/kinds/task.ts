import type { StepOf } from '../../definition/schema.js';
import { rejectEvent } from '../../events.js';
import type { ErrorInfo, TaskState } from '../../snapshot.js';
import { compensationFailed, compensationSucceeded, detachedResult, failStep } from '../compensation.js';
import { backoffMs, resolveRetry, shouldRetry } from '../retry-policy.js';
import { lostError } from '../task-lease.js';
import {
  addTimer,
  type Cx,
  dispatchTask,
  log,
  pushCompleted,
  stepState,
  taskDef,
  taskKey,
} from '../transition-context.js';
import type { StepRules } from './step-rules.js';

type TaskDef = StepOf<'task'> & { id: string };

/**
 * task: dispatches handler attempts and applies their results; retries a failed or lost attempt
 * after a backoff timer, then hands a final failure to the failure policy. Compensation attempts
 * of the step go through the same rules with `phase: 'compensate'`.
 */
export const task: StepRules<TaskDef> = {
  enter: (cx, def) => dispatchTask(cx, def.id, 'run', 1),

  result: {
    /**
     * The in-flight task a result refers to: null for a stale or duplicate result (nothing to do);
     * `INVALID_EVENT` for a result that was never asked for.
     */
    match(cx, def, ev) {
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
    },

    apply(cx, _def, task, ev, flow) {
      delete cx.s.tasks[taskKey(task.step, task.phase)];
      if (ev.type === 'task.failed') attemptFailed(cx, task, ev.error, false);
      else if (task.phase === 'compensate') compensationSucceeded(cx, task.step);
      else if (task.detached) detachedResult(cx, task.step, true, ev.output);
      else {
        // The details were for a retry of this execution; none follows a completion.
        delete stepState(cx, task.step).heartbeatDetails;
        pushCompleted(cx, task.step);
        log(cx, 'step.completed', task.step, { attempt: task.attempt });
        flow.complete(cx, task.step, ev.output ?? null);
      }
    },
  },

  // A lost attempt (deadline missed, or lease lapsed) already cost that wait: the retry goes out at once.
  lost: (cx, _def, task) => attemptFailed(cx, task, lostError(cx, task), true),

  // Its only timers are retry backoffs, of either phase.
  timer(cx, def, timer) {
    const st = stepState(cx, def.id);
    const phase = timer.phase ?? 'run';
    dispatchTask(cx, def.id, phase, (phase === 'run' ? st.attempt : (st.compensation?.attempt ?? 0)) + 1);
  },

  // Fresh attempts from where it stopped; retry limits count from here.
  requeue(cx, def, st) {
    st.status = 'active';
    delete st.error;
    delete st.finishedAt;
    st.attemptBase = st.attempt;
    cx.s.active.push(def.id);
    dispatchTask(cx, def.id, 'run', st.attempt + 1);
  },
};

/**
 * One attempt failed (or missed its deadline). Retries per policy — after a backoff timer, or at
 * once for a lost attempt — else gives up: the failure policy for a run, dlq for a compensation.
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
