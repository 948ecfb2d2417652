import type { StepOf } from '../../definition/schema.js';
import { rejectEvent } from '../../events.js';
import { CHILD_HANDLER } from '../../snapshot.js';
import {
  badChildId,
  checkChildAgain,
  childError,
  childIdOf,
  dispatchChild,
  matchChild,
} from '../child-tasks.js';
import {
  compensationFailed,
  compensationSucceeded,
  detachedResult,
  dispatchCompensation,
  failStep,
} from '../compensation.js';
import { lostError } from '../task-lease.js';
import { dispatchTask, log, pushCompleted, stepState, taskKey } from '../transition-context.js';
import type { StepRules } from './step-rules.js';
import { attemptFailed } from './task.js';

type ChildDef = StepOf<'child'> & { id: string };

/**
 * child: its task stands for the child instance while it runs (the runner starts the child when it
 * wins the write that dispatched it). The child's end arrives as `child.ended`; a missed one is
 * found when the task's deadline passes and it is dispatched again. A child is not retried: its
 * failure is the step's. Compensating the step reverts the child, or runs the step's own handler.
 */
export const child: StepRules<ChildDef> = {
  enter(cx, def) {
    const id = childIdOf(cx, def);
    if (id === undefined) {
      failStep(cx, def.id, badChildId(def.id));
      return;
    }
    stepState(cx, def.id).child = { id };
    dispatchChild(cx, def.id, id, 1);
  },

  childEnded: {
    match: (cx, _def, ev) => matchChild(cx, ev),
    apply(cx, def, task, ev, flow) {
      delete cx.s.tasks[taskKey(def.id, task.phase)];
      const st = stepState(cx, def.id);
      if (task.phase === 'compensate') {
        if (ev.status === 'cancelled') compensationSucceeded(cx, def.id);
        else compensationFailed(cx, def.id, childError(ev));
        return;
      }
      const ok = ev.status === 'completed';
      st.child = ev.pivot && ok ? { id: ev.child, pivot: true } : { id: ev.child };
      if (task.detached) detachedResult(cx, def.id, ok, ev.output ?? null, ok ? undefined : childError(ev));
      else if (!ok) failStep(cx, def.id, childError(ev));
      else {
        pushCompleted(cx, def.id);
        log(cx, 'step.completed', def.id, { detail: `child ${ev.child}` });
        flow.complete(cx, def.id, ev.output ?? null);
      }
    },
  },

  // Only the step's own compensation handler reports as a handler does.
  result: {
    match(cx, def, ev) {
      if ((ev.phase ?? 'run') === 'run' || def.compensate === undefined)
        rejectEvent(`step "${ev.step}" is a child step: its child's end reports for it`, 'step');
      const task = cx.s.tasks[taskKey(def.id, 'compensate')];
      if (!task || task.attempt !== ev.attempt) return null;
      if (ev.key !== undefined && ev.key !== task.idempotencyKey) return null;
      return task;
    },
    apply(cx, def, task, ev) {
      delete cx.s.tasks[taskKey(def.id, 'compensate')];
      if (ev.type === 'task.failed') attemptFailed(cx, task, ev.error, false);
      else compensationSucceeded(cx, def.id);
    },
  },

  // Its own handler if it names one; else the child is reverted (its own compensations run).
  compensate(cx, def, attempt) {
    const child = stepState(cx, def.id).child;
    if (def.compensate === undefined && child) dispatchChild(cx, def.id, child.id, attempt, 'compensate');
    else dispatchTask(cx, def.id, 'compensate', attempt, { handler: def.compensate ?? CHILD_HANDLER });
    return true;
  },

  lost(cx, _def, task) {
    if (task.child !== undefined) checkChildAgain(cx, task);
    else attemptFailed(cx, task, lostError(cx, task), true);
  },

  // Retry timers of its own compensation handler only.
  timer(cx, def) {
    dispatchCompensation(cx, def.id, (stepState(cx, def.id).compensation?.attempt ?? 0) + 1, true);
  },
};
