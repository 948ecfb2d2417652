import type { Snapshot, WorkflowDefinition, WorkflowEvent } from '@stepfold/engine';
import { expect } from 'vitest';
import { referenceStep, type StepOptions, step } from '../src/reducer/reducer.js';

// `step` runs the common events on a plain copy of the snapshot (falling back to a deep copy
// when an event reaches further); `referenceStep` runs every event on a deep copy. Over random
// workflows and events both must give byte-identical JSON, the same "nothing to do" answers
// and the same errors, for a snapshot the reducer produced (frozen, trusted) and for a JSON copy
// of it (what a store returns). Every new snapshot must be deeply frozen, and stepping a JSON
// copy must not change it.

type Result = { snapshot: Snapshot; json: string; same: boolean } | { error: string };

function attempt(f: () => Snapshot, before: Snapshot): Result {
  try {
    const snapshot = f();
    return { snapshot, json: JSON.stringify(snapshot), same: snapshot === before };
  } catch (e) {
    return { error: (e as { code?: string }).code ?? String(e) };
  }
}

const view = (r: Result) => ('error' in r ? r : { json: r.json, same: r.same });

function deepFrozen(v: unknown): boolean {
  if (typeof v !== 'object' || v === null) return true;
  return Object.isFrozen(v) && Object.values(v).every(deepFrozen);
}

/** Drives the plain path and the reference in lockstep; `next` turns the current snapshot into an event. */
export function lockstep(
  def: WorkflowDefinition,
  start: WorkflowEvent,
  next: (s: Snapshot, k: number) => WorkflowEvent | null,
  count: number,
  options: StepOptions = {},
): void {
  let s = step(def, null, start, options);
  let r = referenceStep(def, null, start, options);
  expect(JSON.stringify(s)).toBe(JSON.stringify(r));
  for (let k = 0; k < count; k++) {
    const e = next(s, k);
    if (!e) continue;
    const copy = JSON.parse(JSON.stringify(s)) as Snapshot;
    const copyJson = JSON.stringify(copy);
    const a = attempt(() => step(def, s, e, options), s);
    const b = attempt(() => referenceStep(def, r, e, options), r);
    const c = attempt(() => step(def, copy, e, options), copy);
    expect(view(a)).toEqual(view(b));
    expect(view(c)).toEqual(view(b));
    expect(JSON.stringify(copy)).toBe(copyJson);
    if ('error' in a || 'error' in b || 'error' in c) continue;
    // A no-op hands back the input itself, frozen or not.
    if (!c.same) expect(deepFrozen(a.snapshot) && deepFrozen(c.snapshot)).toBe(true);
    s = a.snapshot;
    r = b.snapshot;
  }
}
