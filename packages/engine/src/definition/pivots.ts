import type { Snapshot } from '../snapshot.js';
import type { CompiledWorkflow } from './compile.js';

/**
 * The first pivot that has completed in a snapshot's current run, if any: a pivot step of its
 * workflow, or a child step (or a workflow map's item) whose child completed past a pivot of its
 * own. From then on nothing rolls back. The reducer and the tools read this one rule.
 */
export function completedPivotOf(wf: CompiledWorkflow, s: Snapshot): string | undefined {
  const own = wf.pivots.find((p) => s.steps[p]?.status === 'completed');
  if (own !== undefined) return own;
  for (const id in s.steps) {
    const st = s.steps[id]!;
    if (st.map?.pivot || (st.child?.pivot && st.status === 'completed')) return id;
  }
  return undefined;
}
