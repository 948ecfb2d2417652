import { compileWorkflow } from '../definition/compile.js';
import { kindOf } from '../definition/kinds/index.js';
import type { WorkflowDefinition } from '../definition/schema.js';
import { ValidationError } from '../errors.js';
import type { Snapshot } from '../snapshot.js';

/** The step a callback for `signal` resumes, and the iteration of it the token is good for. */
export interface CallbackTarget {
  step: string;
  iteration: number;
  run: number;
}

/**
 * Where a callback for `signal`, issued from `snapshot`, binds: the step listening for it (`step`
 * names one when several do). Waiting now: its current iteration. Not entered yet (a task that
 * mails the link before the step): its next one, so the token is good for the visit that follows
 * and for no later one. `INVALID_OPTIONS` when no step, or more than one without `step`, listens.
 */
export function callbackTarget(
  definition: WorkflowDefinition,
  snapshot: Snapshot,
  signal: string,
  step?: string,
): CallbackTarget {
  const { steps } = compileWorkflow(definition).definition;
  const listening = Object.entries(steps)
    .filter(([id, s]) => kindOf(s).listensFor?.({ ...s, id }) === signal)
    .map(([id]) => id);
  const candidates = step === undefined ? listening : listening.filter((id) => id === step);
  // Several listen: the one waiting now, if exactly one is.
  const waiting = candidates.filter((id) => snapshot.active.includes(id));
  const chosen = candidates.length === 1 ? candidates[0] : waiting.length === 1 ? waiting[0] : undefined;
  if (chosen === undefined) {
    const message =
      candidates.length === 0
        ? `no step of ${definition.name} listens for "${signal}"${step === undefined ? '' : ` as step "${step}"`}`
        : `steps ${candidates.join(', ')} all listen for "${signal}": name one with { step }`;
    throw new ValidationError('INVALID_OPTIONS', 'cannot issue a callback token', [
      { path: 'signal', message },
    ]);
  }
  const state = snapshot.steps[chosen];
  const now = snapshot.active.includes(chosen) && state !== undefined;
  return { step: chosen, iteration: now ? state.iteration : (state?.iteration ?? 0) + 1, run: snapshot.run };
}
