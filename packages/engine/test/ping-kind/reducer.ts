import type { StepRules } from '../../src/reducer/kinds/step-rules.js';
import { stepState } from '../../src/reducer/transition-context.js';

/** A `ping` step as its rules read it. */
export interface PingStep {
  kind: 'ping';
  id: string;
  next?: string | undefined;
  times?: number | undefined;
}

/** `ping`: its reducer rules, as `src/reducer/kinds/<kind>.ts` would hold them. */
export const pingRules: StepRules<PingStep> = {
  // The count so far is the step's output, so a snapshot shows how many pongs it has had.
  enter: (cx, def) => {
    stepState(cx, def.id).output = 0;
  },
  signal(cx, def, _sig, flow) {
    const st = stepState(cx, def.id);
    st.output = (st.output as number) + 1;
    if ((st.output as number) >= (def.times ?? 1)) flow.complete(cx, def.id, st.output);
  },
};
