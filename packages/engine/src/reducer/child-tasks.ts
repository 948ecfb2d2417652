import { readPath } from '../definition/data-path.js';
import type { EventOf } from '../events.js';
import { isValidId } from '../ids.js';
import { CHILD_HANDLER, type ErrorInfo, type TaskState } from '../snapshot.js';
import { type Cx, dataView, dispatchTask, stepState, taskKey } from './transition-context.js';

// What child steps and workflow map items share: the child's id, the task that stands for a running
// child, and reading a child's end.

/**
 * The id of the child a step (or a map item) starts: the string at `childId` in the workflow's data,
 * else the dispatching task's idempotency key (`parent/run/step/iteration`, plus `/item`), which no
 * other execution shares. Undefined when that is not a valid instance id.
 */
export function childIdOf(
  cx: Cx,
  def: { id: string; childId?: string | undefined },
  item?: number,
): string | undefined {
  const st = stepState(cx, def.id);
  const id =
    def.childId === undefined
      ? `${cx.s.id}/${cx.s.run}/${def.id}/${st.iteration}${item === undefined ? '' : `/${item}`}`
      : readPath(dataView(cx.s), def.childId);
  return isValidId(id) ? id : undefined;
}

/** Dispatches the task that stands for a child: its writer starts the child, or finds it started. */
export function dispatchChild(
  cx: Cx,
  id: string,
  child: string,
  attempt: number,
  phase: 'run' | 'compensate' = 'run',
  item?: number,
): void {
  dispatchTask(cx, id, phase, attempt, { child, item, handler: CHILD_HANDLER });
}

/**
 * A child's task missed its deadline: its end was not reported in time (or its start was lost with
 * the runner that won the dispatch). Dispatched again, same key, next attempt: its writer starts the
 * child if it does not exist, reads its end if it has one, and cancels it again if detached.
 */
export function checkChildAgain(cx: Cx, task: TaskState): void {
  dispatchChild(cx, task.step, task.child!, task.attempt + 1, task.phase, task.item);
  if (task.detached) cx.s.tasks[taskKey(task.step, task.phase, task.item)]!.detached = true;
}

/** The task a child's end answers: same step, phase, item, key and child; null when stale. */
export function matchChild(cx: Cx, ev: EventOf<'child.ended'>): TaskState | null {
  const task = cx.s.tasks[taskKey(ev.step, ev.phase ?? 'run', ev.item)];
  if (!task || task.idempotencyKey !== ev.key || task.child !== ev.child) return null;
  return task;
}

/** The step's error for a child that did not complete. */
export function childError(ev: EventOf<'child.ended'>): ErrorInfo {
  const own = ev.error;
  const message = `child ${ev.child} ${ev.status}${own ? `: ${own.message}` : ''}`;
  const out: ErrorInfo = { message, code: own?.code ?? 'CHILD_FAILED', retryable: false };
  return out;
}

/** The error of a child id that is not a valid instance id. */
export function badChildId(step: string): ErrorInfo {
  return {
    message: `step ${step}: the child id is not a valid instance id (1-200 of A-Z a-z 0-9 _ . : @ / + = -)`,
    code: 'INVALID_ID',
    retryable: false,
  };
}
