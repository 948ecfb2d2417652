import { branchesNeeded } from '../../definition/kinds/parallel.js';
import type { StepOf } from '../../definition/schema.js';
import { type Cx, deactivate, log, stepState } from '../transition-context.js';
import type { StepRules } from './step-rules.js';

/**
 * parallel: enters every branch; as branches end it records their outputs, and once the join is
 * satisfied it abandons the branches still running (their handlers are detached) and moves on.
 */
export const parallel: StepRules<StepOf<'parallel'> & { id: string }> = {
  enter(cx, def, flow) {
    const st = stepState(cx, def.id);
    st.branches = def.branches.map(() => 'running');
    st.output = def.branches.map(() => null);
    def.branches.forEach((entry, i) => {
      // An earlier branch may already have satisfied the join, or failed the workflow (which
      // may have ended it without touching this step's status).
      if (cx.s.active.includes(def.id) && st.branches?.[i] === 'running') flow.enter(cx, entry);
    });
  },

  branchEnded(cx, def, branch, output, flow) {
    const st = cx.s.steps[def.id];
    if (st?.status !== 'active' || st.branches?.[branch] !== 'running') return;
    st.branches[branch] = 'done';
    (st.output as unknown[])[branch] = output ?? null;
    if (st.branches.filter((b) => b === 'done').length < branchesNeeded(def)) return;
    st.branches.forEach((b, i) => {
      if (b === 'running') abandonBranch(cx, def.id, i);
    });
    log(cx, 'step.completed', def.id);
    // Its output stays the branches' outputs, recorded as they ended.
    flow.complete(cx, def.id);
  },
};

/** Drops the live steps of a branch the join no longer needs; running handlers are detached. */
function abandonBranch(cx: Cx, parallel: string, branch: number): void {
  stepState(cx, parallel).branches![branch] = 'abandoned';
  const inBranch = (id: string) =>
    (cx.wf.regions.get(id) ?? []).some((r) => r.parallel === parallel && r.branch === branch);
  for (const id of [...cx.s.active]) if (inBranch(id)) deactivate(cx, id);
  for (const [id, st] of Object.entries(cx.s.steps)) {
    if (st.status === 'dlq' && inBranch(id)) {
      st.status = 'skipped';
      if (cx.s.error?.step === id) delete cx.s.error;
    }
  }
}
