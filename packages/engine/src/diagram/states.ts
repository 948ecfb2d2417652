import { kindOf } from '../definition/kinds/index.js';
import type { WorkflowDefinition } from '../definition/schema.js';
import type { Snapshot, Status, StepState } from '../snapshot.js';

/** The colour class of a step in a diagram, from its state in a snapshot. */
export type DiagramState = 'done' | 'running' | 'waiting' | 'failed' | 'compensated';

/** Every {@link DiagramState} with its Mermaid `classDef` style. */
export const STATE_STYLES: Readonly<Record<DiagramState, string>> = {
  done: 'fill:#d3f9d8,stroke:#2b8a3e,color:#1b4332',
  running: 'fill:#d0ebff,stroke:#1971c2,stroke-width:3px,color:#0b2e4f',
  waiting: 'fill:#fff3bf,stroke:#e67700,stroke-width:2px,color:#5c3c00',
  failed: 'fill:#ffe3e3,stroke:#c92a2a,stroke-width:2px,color:#5c0a0a',
  compensated: 'fill:#f3d9fa,stroke:#862e9c,stroke-dasharray:5 3,color:#3f0f4a',
};

/**
 * The diagram state of one step: `done` once completed, `failed` when failed or parked in dlq,
 * `compensated` while or after being undone, `running` while active with a handler in flight,
 * `waiting` while active for a signal, a timer or a retry backoff; `undefined` when never
 * entered or skipped.
 */
export function stepState(snapshot: Snapshot, id: string): DiagramState | undefined {
  const state: StepState | undefined = Object.hasOwn(snapshot.steps, id) ? snapshot.steps[id] : undefined;
  switch (state?.status) {
    case 'completed':
      return 'done';
    case 'failed':
    case 'dlq':
    case 'compensation-dlq':
      return 'failed';
    case 'compensating':
    case 'compensated':
      return 'compensated';
    case 'active': {
      const inFlight = Object.values(snapshot.tasks).some(
        (t) => t.step === id && t.phase === 'run' && t.detached !== true,
      );
      if (inFlight) return 'running';
      const retrying = snapshot.timers.some((t) => t.step === id && t.kind === 'retry');
      // A parallel step is active while its branches run: it counts as running, not waiting.
      return retrying || state.branches === undefined ? 'waiting' : 'running';
    }
    default:
      return undefined;
  }
}

/** The steps inside a parallel step's branches, nested ones included: what its branches reach. */
function branchSteps(def: WorkflowDefinition, parallel: string): Set<string> {
  const seen = new Set<string>();
  const step = def.steps[parallel];
  const todo = step ? [...(kindOf(step).forks?.(step) ?? [])] : [];
  for (let id = todo.pop(); id !== undefined; id = todo.pop()) {
    const s = Object.hasOwn(def.steps, id) ? def.steps[id] : undefined;
    if (!s || seen.has(id) || id === parallel) continue;
    seen.add(id);
    // A branch never leads out of its block (the definition is checked for that).
    todo.push(...kindOf(s).targets(s), ...(kindOf(s).forks?.(s) ?? []));
  }
  return seen;
}

/** The diagram state of a child instance in `status`: what its parent's active step is waiting on. */
const CHILD_STATES: Readonly<Record<Status, DiagramState>> = {
  running: 'running',
  waiting: 'waiting',
  compensating: 'compensated',
  completed: 'done',
  failed: 'failed',
  dlq: 'failed',
  cancelled: 'compensated',
  aborted: 'failed',
};

/**
 * The diagram state of every step of `def` that has one (see {@link stepState}), with what only the
 * definition tells: an active parallel step is `running` while a step inside its branches runs, and
 * `waiting` when they all wait (for a signal, a timer, a decision). With `children` (statuses of
 * child instances the caller loaded, by id), an active child step takes its child's state: `waiting`
 * while the child waits, `failed` while it is parked in dlq.
 *
 * @example
 * stepStates(order, snapshot).get('ship'); // 'waiting' while both branches wait for signals
 */
export function stepStates(
  def: WorkflowDefinition,
  snapshot: Snapshot,
  children: Readonly<Record<string, Status>> = {},
): Map<string, DiagramState> {
  const states = new Map<string, DiagramState>();
  for (const id of Object.keys(def.steps)) {
    const state = stepState(snapshot, id);
    if (state !== undefined) states.set(id, state);
    // Once the step has finished its own state says how; while active, its child's says what it waits on.
    const st = Object.hasOwn(snapshot.steps, id) ? snapshot.steps[id] : undefined;
    const child = st?.status === 'active' ? st.child?.id : undefined;
    if (child !== undefined && Object.hasOwn(children, child)) states.set(id, CHILD_STATES[children[child]!]);
  }
  // Steps that fork branches (parallel ones): running while their branches run.
  const parallels = Object.keys(def.steps).filter(
    (id) => states.get(id) === 'running' && kindOf(def.steps[id]!).forks !== undefined,
  );
  // Innermost first in effect: repeat until nothing changes, so an outer block sees its inner ones settled.
  for (let changed = true; changed; ) {
    changed = false;
    for (const id of parallels) {
      if (states.get(id) !== 'running') continue;
      const inside = [...branchSteps(def, id)].map((m) => states.get(m));
      if (!inside.includes('running') && inside.includes('waiting')) {
        states.set(id, 'waiting');
        changed = true;
      }
    }
  }
  return states;
}
