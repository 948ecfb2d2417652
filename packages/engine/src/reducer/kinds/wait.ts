import type { StepOf } from '../../definition/schema.js';
import { addTimer } from '../transition-context.js';
import type { StepRules } from './step-rules.js';

/** wait: listens for its signal (buffered ones are handed over on entry); completes with the payload. */
export const wait: StepRules<StepOf<'wait'> & { id: string }> = {
  enter(cx, def) {
    if (def.timeoutMs !== undefined)
      addTimer(cx, { kind: 'timeout', step: def.id, at: cx.at + def.timeoutMs });
  },
  signal: (cx, def, sig, flow) => flow.signalled(cx, def.id, sig.payload),
  timer: (cx, def, _timer, flow) => flow.timedOut(cx, def.id, def.onTimeout),
};
