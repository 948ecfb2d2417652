import * as z from '../../mini-schema.js';
import { limitField, type RateLimitField } from '../flow-limits.js';
import { defineKind } from '../kind.js';
import {
  failurePolicySchema,
  inputMappingSchema,
  linkedFields,
  mappingIssues,
  mappingPaths,
  millis,
  offloadSchema,
  opt,
  retryPolicySchema,
  stepId,
} from '../step-fields.js';

/** `task`: calls a handler, retried per policy; optionally compensated, a pivot, or parked in dlq. */
export const task = defineKind(
  'task',
  linkedFields,
  {
    handler: stepId,
    input: opt(inputMappingSchema),
    retry: opt(retryPolicySchema),
    timeoutMs: opt(millis(1)),
    /**
     * The handler heartbeats (`ctx.heartbeat`) at least this often: silent this long, its attempt
     * is lost (`HEARTBEAT_TIMEOUT`) and retried. Below the step's timeout.
     */
    heartbeatMs: opt(millis(1)),
    compensate: opt(stepId),
    compensateOnFailure: opt(z.boolean()),
    pivot: opt(z.boolean()),
    onFailure: opt(failurePolicySchema),
    offload: opt(offloadSchema),
    /** At most `limit` attempts at once per key value, across every runner sharing the store. */
    concurrency: opt(limitField),
    /** At most `limit` attempt starts per key value in any window of `periodMs`. */
    rateLimit: opt(limitField as unknown as RateLimitField),
  },
  {
    issues: (step, at) => mappingIssues(step.input, `${at}.input`),
    paths: (step, at) => mappingPaths(step.input, `${at}.input`),
    handlers: (step) => (step.compensate === undefined ? [step.handler] : [step.handler, step.compensate]),
    pivot: (step) => step.pivot === true,
    compensator: (step) => step.compensate,
    compensatesOnFailure: (step) => step.compensateOnFailure === true && step.compensate !== undefined,
    failurePolicy: (step) => step.onFailure,
  },
);
