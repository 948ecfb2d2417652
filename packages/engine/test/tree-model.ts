import type { WorkflowHarness } from '@stepfold/engine';
import { composition, isTerminal, type Snapshot, step, type WorkflowEvent } from '@stepfold/engine';
import { expect } from 'vitest';
import type { StepInfo } from './tree-gen.js';

// What one instance's recorded events say happened, rebuilt by folding them through the reducer
// again: each accepted event must change the snapshot and add one to its version, and the fold must
// end on the harness's snapshot. The saga oracles read this model, not the reducer's bookkeeping.

/** Units of work that complete and may be compensated: a step (`s1`) or a map item (`s2[3]`). */
export const unitOf = (step: string, item?: number) => (item === undefined ? step : `${step}[${item}]`);

export interface InstanceModel {
  id: string;
  final: Snapshot;
  /** Completed units, in order. */
  done: string[];
  /** `done.length` when each pivot was passed (a pivot step, or a child's end past its own pivot). */
  pivotAt: number[];
  /** A pivot passed while a rollback was under way: it stopped there. */
  stopped: boolean;
  /** Successful compensations per unit. */
  undone: Map<string, number>;
  /** The child instance behind each completed child unit. */
  childOf: Map<string, string>;
  /** Accepted `child.ended` events per `child|phase`. */
  ends: Map<string, number>;
  /** Accepted `revert` events (this instance undone by its parent's rollback). */
  reverts: number;
  /** Workflow maps requeued from dlq (a requeue past the tolerance parks them again). */
  requeuedMaps: Set<string>;
}

/** Folds `h`'s events again, checking each step; the model of what they did. */
export function modelOf(h: WorkflowHarness, steps: Map<string, StepInfo>): InstanceModel {
  const m: InstanceModel = {
    id: h.id,
    final: h.snapshot,
    done: [],
    pivotAt: [],
    stopped: false,
    undone: new Map(),
    childOf: new Map(),
    ends: new Map(),
    reverts: 0,
    requeuedMaps: new Set(),
  };
  const begun = new Set<string>();
  let s: Snapshot | null = null;
  for (const e of h.events) {
    const next = step(h.definition, s, e, { kinds: [composition] });
    expect(next, `${h.id}: a recorded ${e.type} changed nothing`).not.toBe(s);
    expect(next.version, `${h.id}: version after ${e.type}`).toBe(s ? s.version + 1 : 1);
    if (s && isTerminal(s.status)) {
      // The one way out of a terminal status: a completed child reverted by its parent's rollback.
      expect({ id: h.id, from: s.status, event: e.type }).toEqual({
        id: h.id,
        from: 'completed',
        event: 'revert',
      });
      expect(s.parent).toBeDefined();
    }
    observe(m, s, next, e, steps, begun);
    s = next;
  }
  expect(JSON.stringify(s), `${h.id}: replay`).toBe(JSON.stringify(h.snapshot));
  return m;
}

const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

function observe(
  m: InstanceModel,
  prev: Snapshot | null,
  next: Snapshot,
  e: WorkflowEvent,
  steps: Map<string, StepInfo>,
  begun: Set<string>,
): void {
  const rollingBack = prev?.saga !== undefined;
  const passPivot = () => {
    m.pivotAt.push(m.done.length);
    if (rollingBack) m.stopped = true;
  };
  if (e.type === 'task.completed') {
    const unit = unitOf(e.step, e.item);
    if ((e.phase ?? 'run') === 'run') m.done.push(unit);
    else bump(m.undone, unit);
  } else if (e.type === 'child.ended') {
    const unit = unitOf(e.step, e.item);
    const phase = e.phase ?? 'run';
    bump(m.ends, `${e.child}|${phase}`);
    if (phase === 'run' && e.status === 'completed') {
      m.done.push(unit);
      m.childOf.set(unit, e.child);
      if (e.pivot) passPivot();
    } else if (phase === 'compensate' && e.status === 'cancelled') bump(m.undone, unit);
  } else if (e.type === 'revert') m.reverts += 1;
  else if (e.type === 'requeue' && prev) {
    for (const [id, info] of steps)
      if (info.kind === 'wmap' && prev.steps[id]?.status === 'dlq') m.requeuedMaps.add(id);
  }
  for (const [id, info] of steps) {
    if (info.pivot && next.steps[id]?.status === 'completed' && prev?.steps[id]?.status !== 'completed')
      passPivot();
  }
  // A compensation begins only for a unit that completed, and never for one a pivot passed after.
  for (const t of Object.values(next.tasks)) {
    if (t.phase !== 'compensate') continue;
    const unit = unitOf(t.step, t.item);
    if (begun.has(unit)) continue;
    begun.add(unit);
    const at = m.done.lastIndexOf(unit);
    expect(at, `${m.id}: ${unit} compensated without completing`).toBeGreaterThanOrEqual(0);
    expect(
      m.pivotAt.some((p) => p > at),
      `${m.id}: ${unit} compensated past a pivot`,
    ).toBe(false);
  }
}

/** Whether a pivot has passed (what a cancel is refused for), by the model. */
export function pastPivot(m: InstanceModel): boolean {
  return m.pivotAt.length > 0;
}
