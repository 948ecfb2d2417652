import type { StepOf } from '../../definition/schema.js';
import { signalled, timedOut } from '../flow.js';
import { addTimer } from '../transition-context.js';
import type { StepRules } from './step-rules.js';

/** wait: listens for its signal (buffered ones are handed over on entry); completes with the payload. */
export const wait: StepRules<StepOf<'wait'> & { id: string }> = {
  enter(cx, def) {
    if (def.timeoutMs !== undefined)
      addTimer(cx, { kind: 'timeout', step: def.id, at: cx.at + def.timeoutMs });
  },
  signal: (cx, def, sig) => signalled(cx, def.id, sig.payload),
  timer: (cx, def) => timedOut(cx, def.id, def.onTimeout),
};
