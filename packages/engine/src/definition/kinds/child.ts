import * as z from '../../mini-schema.js';
import { CHILD_HANDLER } from '../../snapshot.js';
import { defineKind } from '../kind.js';
import {
  failurePolicySchema,
  inputMappingSchema,
  integer,
  linkedFields,
  mappingIssues,
  mappingPaths,
  millis,
  opt,
  pathString,
  stepId,
} from '../step-fields.js';

/**
 * `child`: starts another workflow as its own instance in the same store and waits for its end;
 * its output is the child's output, its failure the step's failure. The child's id is
 * `parent/run/step/iteration`, or the string at `childId`. Rolling it back reverts the child (its
 * own compensations run) unless the step names a `compensate` handler of its own.
 */
export const child = defineKind(
  'child',
  linkedFields,
  {
    workflow: stepId,
    version: opt(integer(1, 1_000_000)),
    input: opt(inputMappingSchema),
    childId: opt(pathString),
    /** How often the parent checks on the child if its end was not reported (default: the task timeout). */
    timeoutMs: opt(millis(1)),
    compensate: opt(stepId),
    pivot: opt(z.boolean()),
    onFailure: opt(failurePolicySchema),
  },
  {
    issues: (step, at) => [
      ...mappingIssues(step.input, `${at}.input`),
      ...mappingIssues(step.childId, `${at}.childId`),
    ],
    paths: (step, at) => [
      ...mappingPaths(step.input, `${at}.input`),
      ...mappingPaths(step.childId, `${at}.childId`),
    ],
    handlers: (step) => (step.compensate === undefined ? [] : [step.compensate]),
    workflows: (step) => [step.workflow],
    pivot: (step) => step.pivot === true,
    compensator: (step) => step.compensate ?? CHILD_HANDLER,
    failurePolicy: (step) => step.onFailure,
  },
);
