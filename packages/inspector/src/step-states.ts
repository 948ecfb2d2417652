import type { Snapshot, Status, WorkflowDefinition } from '@stepfold/engine';
import { type DiagramState, stepState, stepStates } from '@stepfold/engine';

/** What the inspector calls a step's state: the diagram's states, plus skipped and not entered. */
export type StepLabel = DiagramState | 'skipped' | 'not entered';

/**
 * Each step's label: the diagram's own state (so the diagram and the tables agree, a parallel step
 * whose branches all wait included, and an active child step taking its child's state from
 * `children`, the child statuses the page loaded), `skipped` for a step a choice passed by, else
 * `not entered`.
 */
export function stepLabels(
  s: Snapshot,
  def: WorkflowDefinition | undefined,
  children: Readonly<Record<string, Status>> = {},
): Map<string, StepLabel> {
  const ids = [...new Set([...Object.keys(def?.steps ?? {}), ...Object.keys(s.steps)])];
  const states = def ? stepStates(def, s, children) : undefined;
  const labels = new Map<string, StepLabel>();
  for (const id of ids) {
    const st = Object.hasOwn(s.steps, id) ? s.steps[id] : undefined;
    const state = states ? states.get(id) : stepState(s, id);
    labels.set(id, st?.status === 'skipped' ? 'skipped' : (state ?? 'not entered'));
  }
  return labels;
}
