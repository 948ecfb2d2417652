import type { StepOf } from '../../definition/schema.js';
import type { StepRules } from './step-rules.js';
import { signalled, startTimeout, timedOut } from './waiting.js';

/** wait: listens for its signal (buffered ones are handed over on entry); completes with the payload. */
export const wait: StepRules<StepOf<'wait'> & { id: string }> = {
  enter: startTimeout,
  signal: (cx, def, sig, flow) => signalled(cx, def.id, sig.payload, flow),
  timer: timedOut,
};
