import { defineKind } from '../kind.js';
import { endFields, inputMappingSchema, mappingIssues, mappingPaths, opt } from '../step-fields.js';

/** `continueAsNew`: ends the run and starts a fresh one of the same instance with `carry` as input. */
export const continueAsNew = defineKind(
  'continueAsNew',
  endFields,
  { carry: opt(inputMappingSchema) },
  {
    issues: (step, at) => mappingIssues(step.carry, `${at}.carry`),
    paths: (step, at) => mappingPaths(step.carry, `${at}.carry`),
  },
);
