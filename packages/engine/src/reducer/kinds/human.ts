import { humanDecision } from '../../definition/kinds/human.js';
import type { StepOf } from '../../definition/schema.js';
import { rejectEvent } from '../../events.js';
import { failStep } from '../compensation.js';
import { clearTimers, log, stepState } from '../transition-context.js';
import type { StepRules } from './step-rules.js';
import { signalled, startTimeout, timedOut } from './waiting.js';

/** human: a wait whose signal must carry a decision; approve completes it, reject fails it (`REJECTED`). */
export const human: StepRules<StepOf<'human'> & { id: string }> = {
  enter: startTimeout,

  checkSignal(_cx, def, ev) {
    if (humanDecision(ev.payload) === undefined) {
      rejectEvent(
        `signal "${ev.name}" for human step "${def.id}" needs { decision: "approve" | "reject" }`,
        'payload',
      );
    }
  },

  signal(cx, def, sig, flow) {
    const decision = humanDecision(sig.payload);
    if (decision === undefined) {
      // Only a buffered signal gets here (a live one is rejected as invalid): it decides nothing.
      log(cx, 'signal.ignored', def.id, { detail: 'no approve/reject decision' });
      return;
    }
    if (decision) {
      signalled(cx, def.id, sig.payload, flow);
      return;
    }
    clearTimers(cx, def.id);
    stepState(cx, def.id).output = sig.payload;
    failStep(cx, def.id, { message: `rejected at ${def.id}`, code: 'REJECTED', retryable: false });
  },

  timer: timedOut,
};
