import type { StepOf } from '../../definition/schema.js';
import type { MapState } from '../../snapshot.js';
import { dispatchChild } from '../child-tasks.js';
import { compensator, dispatchCompensation, pivotPassed, pumpRollback, queueOnce } from '../compensation.js';
import { type Cx, dispatchTask, log, stepState } from '../transition-context.js';

// A map's rollback: its completed items undone one at a time, latest index first, each exactly once
// (late ones too); a workflow map's items by reverting their children.

type MapDef = StepOf<'map'> & { id: string };

/** Dispatches the compensation of the next completed item; false when none is left (the step is compensated). */
export function undoNextItem(cx: Cx, def: MapDef, attempt: number, retry: boolean): boolean {
  const st = stepState(cx, def.id);
  // No map state: its items were not an array, so it started none and has nothing to undo.
  const item = st.map && nextToUndo(st.map);
  if (item === undefined) {
    st.status = 'compensated';
    log(cx, 'compensation.completed', def.id);
    return false;
  }
  // Each item's retries count from its own first attempt.
  if (!retry) st.compensation = { ...st.compensation, attempt: attempt - 1, attemptBase: attempt - 1 };
  if (def.compensate === undefined) {
    const key = `${cx.s.id}/${cx.s.run}/${def.id}/${st.iteration}/${item}`;
    dispatchChild(cx, def.id, key, attempt, 'compensate', item);
  } else dispatchTask(cx, def.id, 'compensate', attempt, { item, handler: def.compensate });
  return true;
}

/** The compensation of the item at the head of the map's undo list succeeded: the next, or done. */
export function itemUndone(cx: Cx, def: MapDef): void {
  const st = stepState(cx, def.id);
  const map = st.map!;
  const item = map.undo!.shift();
  map.undone = (map.undone ?? 0) + 1;
  log(cx, 'item.compensated', def.id, { detail: `item ${item}` });
  // A child item completed past its pivot meanwhile (it was in flight when the rollback began): what
  // it did stands, so the items done before it stay done, as the rest of the rollback stops there.
  if (pivotPassed(cx)) {
    map.undo = [];
    delete map.undoBelow;
    st.status = 'compensated';
    log(cx, 'compensation.stopped', def.id, { detail: 'pivot completed' });
  } else if (dispatchCompensation(cx, def.id, (st.compensation?.attempt ?? 0) + 1)) return;
  pumpRollback(cx);
}

/**
 * The item to compensate next, left at the head of `undo` until it is undone: the head already
 * there (being compensated, or one that completed late), else the latest completed index below
 * `undoBelow`. The rollback walks the indexes down instead of listing them, so its state stays
 * O(`maxConcurrency`) like the forward state's. A snapshot written before `undoBelow` existed
 * holds the whole list in `undo` and no `undoBelow`: it is read the same way.
 */
function nextToUndo(map: MapState): number | undefined {
  if (map.undo === undefined) {
    map.undo = [];
    map.undoBelow = map.next;
  }
  if (map.undo.length === 0 && map.undoBelow) {
    const item = latestCompleted(map, map.undoBelow);
    if (item === undefined) delete map.undoBelow;
    else {
      map.undoBelow = item;
      map.undo.push(item);
    }
  }
  return map.undo[0];
}

/** The latest completed index below `below`: dispatched (below `next`), neither running nor failed. */
function latestCompleted(map: MapState, below: number): number | undefined {
  const skip = new Set([...map.running, ...map.failed]);
  for (let i = Math.min(below, map.next) - 1; i >= 0; i--) if (!skip.has(i)) return i;
  return undefined;
}

/**
 * An item of a map being rolled back completed late (it was in flight when the rollback began):
 * undone too, once. Before the map's compensation starts it is among the completed items anyway,
 * and so it is after while the walk down the indexes has not passed it; else it joins the items to
 * undo (and the map goes back in the queue if it was done).
 */
export function undoLateItem(cx: Cx, id: string, item: number): void {
  const st = stepState(cx, id);
  const saga = cx.s.saga;
  // Past a pivot (this item's own child may have passed one) the rollback undoes nothing more.
  if (!saga || compensator(cx, id) === undefined || pivotPassed(cx)) return;
  const map = st.map!;
  if (map.undo === undefined) {
    if (!saga.queue.includes(id) && st.status !== 'compensating') queueOnce(cx, id);
    return;
  }
  // Below where the walk down the indexes has reached, the walk finds it: it is no longer running.
  if (item < (map.undoBelow ?? 0)) return;
  map.undo.push(item);
  if (st.status !== 'compensating') {
    st.status = 'failed';
    queueOnce(cx, id);
  }
}
