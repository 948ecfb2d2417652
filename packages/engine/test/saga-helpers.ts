import type { Snapshot, WorkflowHarness } from '@stepfold/engine';
import { expect } from 'vitest';

/** Accepted successful compensations per step, counted from the harness's recorded events. */
export function compensated(h: WorkflowHarness): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of h.events) {
    if (e.type === 'task.completed' && e.phase === 'compensate') out[e.step] = (out[e.step] ?? 0) + 1;
  }
  return out;
}

/** Compensation dispatches per step, from the snapshot's log (give the workflow a large log limit). */
export function compensationDispatches(s: Snapshot): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of s.log) {
    if (e.type === 'compensation.dispatched' && e.step) out[e.step] = (out[e.step] ?? 0) + 1;
  }
  return out;
}

/** Steps in the order their compensations were dispatched (first dispatch only). */
export function compensationOrder(s: Snapshot): string[] {
  const out: string[] = [];
  for (const e of s.log) {
    if (e.type === 'compensation.dispatched' && e.step && !out.includes(e.step)) out.push(e.step);
  }
  return out;
}

/** A terminal instance holds nothing in flight and replays to the same JSON. */
export function expectSettled(h: WorkflowHarness): void {
  expect(h.snapshot.tasks).toEqual({});
  expect(h.snapshot.timers).toEqual([]);
  expect(h.snapshot.active).toEqual([]);
  expect(h.snapshot.wakeAt).toBeNull();
  expect(JSON.stringify(h.replayed())).toBe(JSON.stringify(h.snapshot));
}

/** Status of each named step. */
export function statuses(s: Snapshot, ids: string[]): Record<string, string | undefined> {
  return Object.fromEntries(ids.map((id) => [id, s.steps[id]?.status]));
}
