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
  const map = st.map;
  if (map) map.undo ??= completedItems(map);
  const item = map?.undo?.[0];
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
    st.status = 'compensated';
    log(cx, 'compensation.stopped', def.id, { detail: 'pivot completed' });
  } else if (dispatchCompensation(cx, def.id, (st.compensation?.attempt ?? 0) + 1)) return;
  pumpRollback(cx);
}

/** A map's completed items, latest index first: below `next`, neither running nor failed. */
function completedItems(map: MapState): number[] {
  const skip = new Set([...map.running, ...map.failed]);
  const out: number[] = [];
  for (let i = map.next - 1; i >= 0; i--) if (!skip.has(i)) out.push(i);
  return out;
}

/**
 * An item of a map being rolled back completed late (it was in flight when the rollback began):
 * undone too, once. Before the map's compensation starts it is among the completed items anyway;
 * after, it joins the items to undo (and the map goes back in the queue if it was done).
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
  map.undo.push(item);
  if (st.status !== 'compensating') {
    st.status = 'failed';
    queueOnce(cx, id);
  }
}
