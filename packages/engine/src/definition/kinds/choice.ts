import * as z from '../../mini-schema.js';
import { conditionIssues, conditionPaths } from '../condition.js';
import { defineKind } from '../kind.js';
import { conditionSchema, endFields, opt, stepId } from '../step-fields.js';

/** `choice`: continues with the first branch whose condition holds, else `otherwise`. */
export const choice = defineKind(
  'choice',
  endFields,
  {
    branches: z.array(z.strictObject({ when: conditionSchema, next: stepId })).check(z.minLength(1)),
    otherwise: opt(stepId),
  },
  {
    targets: (step) => [...step.branches.map((b) => b.next), ...(step.otherwise ? [step.otherwise] : [])],
    paths: (step, at) => step.branches.flatMap((b, i) => conditionPaths(b.when, `${at}.branches.${i}.when`)),
    issues: (step, at) =>
      step.branches.flatMap((b, i) => conditionIssues(b.when, `${at}.branches.${i}.when`)),
  },
);
