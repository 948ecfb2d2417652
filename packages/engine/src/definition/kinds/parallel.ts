import * as z from '../../mini-schema.js';
import { defineKind } from '../kind.js';
import { integer, linkedFields, opt, stepId } from '../step-fields.js';

/** `parallel`: forks branches (their entry steps) and joins them: all, any, or at least n. */
export const parallel = defineKind(
  'parallel',
  linkedFields,
  {
    branches: z.array(stepId).check(z.minLength(1)),
    join: opt(z.union([z.literal('all'), z.literal('any'), z.strictObject({ atLeast: integer(1, 10_000) })])),
  },
  {
    forks: (step) => step.branches,
    issues: (step, at) =>
      typeof step.join === 'object' && step.join.atLeast > step.branches.length
        ? [
            {
              path: `${at}.join`,
              message: `atLeast ${step.join.atLeast} exceeds ${step.branches.length} branches`,
            },
          ]
        : [],
  },
);

/** How many branches must finish before a parallel step completes. */
export function branchesNeeded(step: {
  branches: string[];
  join?: 'all' | 'any' | { atLeast: number } | undefined;
}): number {
  const join = step.join ?? 'all';
  return join === 'all' ? step.branches.length : join === 'any' ? 1 : join.atLeast;
}
