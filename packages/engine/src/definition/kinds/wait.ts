import { defineKind } from '../kind.js';
import { linkedFields, millis, nextOf, opt, stepId } from '../step-fields.js';

/** `wait`: waits for a named signal, optionally with a timeout that fails or takes `onTimeout`. */
export const wait = defineKind(
  'wait',
  linkedFields,
  {
    signal: stepId,
    timeoutMs: opt(millis(1)),
    onTimeout: opt(stepId),
  },
  {
    waits: true,
    targets: (step) => [...nextOf(step), ...(step.onTimeout ? [step.onTimeout] : [])],
    listensFor: (step) => step.signal,
  },
);
