import { evaluateCondition } from '../../definition/condition.js';
import { readPath } from '../../definition/data-path.js';
import { DEFAULT_MAP_CONCURRENCY, toleratedFailures } from '../../definition/kinds/map.js';
import type { StepOf } from '../../definition/schema.js';
import { rejectEvent } from '../../events.js';
import type { ErrorInfo, MapState, TaskState } from '../../snapshot.js';
import { checkChildAgain, childError, childIdOf, dispatchChild, matchChild } from '../child-tasks.js';
import {
  compensationFailed,
  dispatchCompensation,
  failStep,
  failurePolicy,
  pumpRollback,
} from '../compensation.js';
import { backoffMs, resolveRetry, shouldRetry } from '../retry-policy.js';
import { lostError } from '../task-lease.js';
import {
  addTimer,
  type Cx,
  dataView,
  detachItems,
  dispatchTask,
  log,
  pushCompleted,
  stepState,
  taskKey,
} from '../transition-context.js';
import { itemUndone, undoLateItem, undoNextItem } from './map-undo.js';
import type { Flow, StepRules } from './step-rules.js';
import { attemptFailed } from './task.js';

type MapDef = StepOf<'map'> & { id: string };

// A requeued map retries its failed items from this many attempts on, so a zombie's result for an
// earlier attempt of the same item never matches the new one. Items that never ran start at 1.
const REQUEUE_ATTEMPTS = 1000;

/**
 * map: one task per item (a handler run, or a child workflow), at most `maxConcurrency` in flight,
 * dispatched in index order; each result dispatches the next item in the same write, unless a
 * result met `until` (then the step completes once the items in flight end). Handler items
 * retry per policy; failures past `tolerated` fail the step (items in flight are detached, and
 * compensated if they still complete); completed items are compensated one by one, latest first.
 */
export const map: StepRules<MapDef> = {
  enter(cx, def, flow) {
    const st = stepState(cx, def.id);
    const items = readPath(dataView(cx.s), def.items);
    if (!Array.isArray(items)) {
      const message = `map ${def.id}: ${def.items} is not an array`;
      failStep(cx, def.id, { message, code: 'INVALID_ITEMS', retryable: false });
      return;
    }
    st.map = { total: items.length, next: 0, running: [], failed: [], ok: 0 };
    if (collects(def)) st.output = new Array(items.length).fill(null);
    fill(cx, def);
    finishIfDone(cx, def, flow);
  },

  result: {
    match(cx, def, ev) {
      if (ev.item === undefined) rejectEvent(`step "${ev.step}" is a map: a result names its item`, 'item');
      const task = cx.s.tasks[taskKey(def.id, ev.phase ?? 'run', ev.item)];
      if (!task || task.attempt !== ev.attempt) return null;
      if (ev.key !== undefined && ev.key !== task.idempotencyKey) return null;
      return task;
    },
    apply(cx, def, task, ev, flow) {
      delete cx.s.tasks[taskKey(def.id, task.phase, task.item)];
      if (task.phase === 'compensate') {
        if (ev.type === 'task.failed') attemptFailed(cx, task, ev.error, false);
        else itemUndone(cx, def);
      } else if (ev.type === 'task.completed') itemDone(cx, def, task, ev.output ?? null, flow);
      else itemAttemptFailed(cx, def, task, ev.error, false, flow);
    },
  },

  childEnded: {
    match: (cx, _def, ev) => matchChild(cx, ev),
    apply(cx, def, task, ev, flow) {
      delete cx.s.tasks[taskKey(def.id, task.phase, task.item)];
      if (task.phase === 'compensate') {
        if (ev.status === 'cancelled') itemUndone(cx, def);
        else compensationFailed(cx, def.id, childError(ev));
        return;
      }
      if (ev.status !== 'completed') {
        itemFailed(cx, def, task, childError(ev), flow);
        return;
      }
      if (ev.pivot) stepState(cx, def.id).map!.pivot = true;
      itemDone(cx, def, task, ev.output ?? null, flow);
    },
  },

  lost(cx, def, task, flow) {
    if (task.child !== undefined) checkChildAgain(cx, task);
    else if (task.phase === 'compensate') attemptFailed(cx, task, lostError(cx, task), true);
    else itemAttemptFailed(cx, def, task, lostError(cx, task), true, flow);
  },

  // One completed item at a time, latest index first (its child reverted for a workflow map).
  compensate: (cx, def, attempt, retry) => undoNextItem(cx, def, attempt, retry),

  timer(cx, def, timer) {
    const st = stepState(cx, def.id);
    if ((timer.phase ?? 'run') === 'compensate') {
      dispatchCompensation(cx, def.id, (st.compensation?.attempt ?? 0) + 1, true);
      return;
    }
    const item = timer.item!;
    if (st.status !== 'active' || !st.map!.running.includes(item)) return;
    dispatchItem(cx, def, item, (timer.attempt ?? 0) + 1);
  },

  // The failed items are tried again (handler items with fresh attempts; a workflow's failed
  // children are final: a child workflow with `onFailure: 'dlq'` is requeued itself); the items
  // still to come are dispatched as before.
  requeue(cx, def, st, flow) {
    // Its items were not an array: entered again, it reads them again (a requeue may patch the input).
    if (!st.map) {
      flow.enter(cx, def.id);
      return;
    }
    const map = st.map;
    st.status = 'active';
    delete st.error;
    delete st.finishedAt;
    cx.s.active.push(def.id);
    if (def.handler !== undefined) {
      st.attemptBase = (st.attemptBase ?? 0) + REQUEUE_ATTEMPTS;
      const retry = map.failed;
      map.failed = [];
      for (const item of retry) {
        map.running.push(item);
        dispatchItem(cx, def, item, st.attemptBase + 1);
      }
    }
    // A workflow map's failed children stay failed: past the tolerance, it parks again.
    else if (map.failed.length > toleratedFailures(def, map.total)) {
      const message = `${map.failed.length} children failed (items ${map.failed.join(', ')}); requeue their children, not the map`;
      failStep(cx, def.id, { message, code: 'CHILD_FAILED', retryable: false }, 'dlq');
      return;
    }
    fill(cx, def);
    finishIfDone(cx, def, flow);
  },
};

const collects = (def: MapDef) =>
  (def.results ?? (def.workflow === undefined ? 'collect' : 'discard')) === 'collect';

/** Dispatches items in index order while fewer than `maxConcurrency` are in flight. */
function fill(cx: Cx, def: MapDef): void {
  const map = stepState(cx, def.id).map!;
  const limit = def.maxConcurrency ?? DEFAULT_MAP_CONCURRENCY;
  if (map.stopped) return;
  while (map.running.length < limit && map.next < map.total) {
    const item = map.next++;
    map.running.push(item);
    dispatchItem(cx, def, item, 1);
  }
}

/**
 * How many times an item has been tried in its current run of retries. The items the latest
 * requeue retried count from its base; the others from where they were first dispatched: 1, or for
 * one still in flight from before that requeue, an earlier requeue's base (a multiple of
 * {@link REQUEUE_ATTEMPTS}).
 */
function itemTries(attempt: number, base: number): number {
  return attempt > base ? attempt - base : ((attempt - 1) % REQUEUE_ATTEMPTS) + 1;
}

function dispatchItem(cx: Cx, def: MapDef, item: number, attempt: number): void {
  if (def.workflow === undefined) {
    dispatchTask(cx, def.id, 'run', attempt, { item, handler: def.handler });
    return;
  }
  const child = childIdOf(cx, { id: def.id }, item);
  if (child === undefined) {
    const map = stepState(cx, def.id).map!;
    map.running.splice(map.running.indexOf(item), 1);
    map.failed.push(item);
    return;
  }
  dispatchChild(cx, def.id, child, attempt, 'run', item);
}

function itemDone(cx: Cx, def: MapDef, task: TaskState, output: unknown, flow: Flow): void {
  const st = stepState(cx, def.id);
  const map = st.map!;
  const item = task.item!;
  map.running.splice(map.running.indexOf(item), 1);
  map.ok += 1;
  if (collects(def) && Array.isArray(st.output)) st.output[item] = output;
  log(cx, 'item.completed', def.id, { attempt: task.attempt, detail: `item ${item}` });
  if (task.detached) {
    undoLateItem(cx, def.id, item);
    pumpRollback(cx);
    return;
  }
  if (st.status !== 'active') return; // parked in dlq: recorded, nothing more dispatched
  if (def.until !== undefined && evaluateCondition(def.until, { result: output, index: item }))
    map.stopped = true;
  fill(cx, def);
  finishIfDone(cx, def, flow);
}

function itemAttemptFailed(
  cx: Cx,
  def: MapDef,
  task: TaskState,
  error: ErrorInfo,
  immediate: boolean,
  flow: Flow,
): void {
  const st = stepState(cx, def.id);
  if (!task.detached && st.status === 'active') {
    const policy = resolveRetry(def.retry, cx.wf.definition.defaults?.retry);
    const tries = itemTries(task.attempt, st.attemptBase ?? 0);
    const detail = `item ${task.item}: ${error.code ? `${error.code}: ` : ''}${error.message}`;
    log(cx, 'task.failed', def.id, { attempt: task.attempt, detail });
    if (shouldRetry(policy, tries, error)) {
      const delay = immediate ? 0 : backoffMs(policy, `${cx.s.id}/${task.item}`, def.id, tries);
      addTimer(cx, {
        kind: 'retry',
        step: def.id,
        phase: 'run',
        at: cx.at + delay,
        item: task.item,
        attempt: task.attempt,
      });
      return;
    }
  }
  itemFailed(cx, def, task, error, flow);
}

/** An item failed for good: tolerated, or the step fails (and items in flight are detached). */
function itemFailed(cx: Cx, def: MapDef, task: TaskState, error: ErrorInfo, flow: Flow): void {
  const st = stepState(cx, def.id);
  const map = st.map!;
  const item = task.item!;
  map.running.splice(map.running.indexOf(item), 1);
  map.failed.push(item);
  log(cx, 'item.failed', def.id, { attempt: task.attempt, detail: `item ${item}: ${error.message}` });
  if (task.detached) {
    pumpRollback(cx);
    return;
  }
  if (st.status !== 'active') return;
  if (map.failed.length <= toleratedFailures(def, map.total)) {
    fill(cx, def);
    finishIfDone(cx, def, flow);
    return;
  }
  const policy = failurePolicy(cx, def.id);
  // Parked in dlq, the items in flight finish and are recorded; otherwise they are detached.
  if (policy !== 'dlq') detachItems(cx, def.id);
  const at = { ...error, message: `item ${item} failed: ${error.message}` };
  failStep(cx, def.id, at, policy);
}

/** Every item dispatched (or `until` met) and none in flight: the step completes with its results (or a summary). */
function finishIfDone(cx: Cx, def: MapDef, flow: Flow): void {
  const st = stepState(cx, def.id);
  const map = st.map!;
  if (st.status !== 'active' || (map.next < map.total && !map.stopped) || map.running.length) return;
  pushCompleted(cx, def.id);
  log(cx, 'step.completed', def.id, { detail: `${map.ok} of ${map.total} items` });
  flow.complete(cx, def.id, collects(def) ? undefined : summary(cx, def, map));
}

/** A map's output when results stay with the items: counts, the failed indexes, where children are. */
export function summary(cx: Cx, def: MapDef, map: MapState): unknown {
  const out: Record<string, unknown> = { total: map.total, completed: map.ok, failed: [...map.failed] };
  if (def.workflow !== undefined) {
    const st = stepState(cx, def.id);
    // Child ids are this prefix plus the item index: `runner.get(prefix + i)` reads one.
    out['children'] = `${cx.s.id}/${cx.s.run}/${def.id}/${st.iteration}/`;
  }
  return out;
}
