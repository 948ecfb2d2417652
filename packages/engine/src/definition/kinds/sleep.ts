import { defineKind } from '../kind.js';
import { linkedFields, mappingIssues, mappingPaths, millis, opt, pathString } from '../step-fields.js';

/** `sleep`: a durable timer, `ms` from entry or `until` an epoch-ms value read from the data. */
export const sleep = defineKind(
  'sleep',
  linkedFields,
  {
    ms: opt(millis()),
    until: opt(pathString),
  },
  {
    waits: true,
    paths: (step, at) => mappingPaths(step.until, `${at}.until`),
    issues: (step, at) => [
      ...((step.ms === undefined) === (step.until === undefined)
        ? [{ path: at, message: 'sleep needs exactly one of ms or until' }]
        : []),
      ...(step.until === undefined ? [] : mappingIssues(step.until, `${at}.until`)),
    ],
  },
);
