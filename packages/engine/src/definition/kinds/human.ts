import { defineKind } from '../kind.js';
import { linkedFields, millis, nextOf, opt, stepId } from '../step-fields.js';

/** `human`: waits for a decision signal (`{ decision: 'approve' | 'reject' }`), named after the step by default. */
export const human = defineKind(
  'human',
  linkedFields,
  {
    signal: opt(stepId),
    timeoutMs: opt(millis(1)),
    onTimeout: opt(stepId),
  },
  {
    waits: true,
    targets: (step) => [...nextOf(step), ...(step.onTimeout ? [step.onTimeout] : [])],
    listensFor: (step) => step.signal ?? step.id,
  },
);

/** Whether a human step's payload says approve (true), reject (false), or neither (undefined). */
export function humanDecision(payload: unknown): boolean | undefined {
  if (typeof payload !== 'object' || payload === null) return undefined;
  const p = payload as { decision?: unknown; approved?: unknown };
  if (p.decision === 'approve' || p.approved === true) return true;
  if (p.decision === 'reject' || p.approved === false) return false;
  return undefined;
}
