import { defineKind } from '../kind.js';
import { endFields, inputMappingSchema, mappingIssues, mappingPaths, opt } from '../step-fields.js';

/** `succeed`: completes the workflow (or its parallel branch) with an optional mapped output. */
export const succeed = defineKind(
  'succeed',
  endFields,
  { output: opt(inputMappingSchema) },
  {
    issues: (step, at) => mappingIssues(step.output, `${at}.output`),
    paths: (step, at) => mappingPaths(step.output, `${at}.output`),
  },
);
