import { fnv1a } from '../content-hash.js';
import type { RetryPolicyInput } from '../definition/schema.js';

/** A retry policy with every field filled. */
export interface RetryPolicy {
  maxAttempts: number;
  initialMs: number;
  factor: number;
  maxMs: number;
  jitter: number;
  nonRetryable: string[];
}

/** Built-in retry defaults: 3 attempts, 1 s doubling to at most 60 s, ±10 % jitter. */
export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 3,
  initialMs: 1000,
  factor: 2,
  maxMs: 60_000,
  jitter: 0.1,
  nonRetryable: [],
};

export { DEFAULT_TIMEOUT_MS } from '../definition/step-fields.js';

/** Step policy over workflow defaults over built-in defaults. */
export function resolveRetry(step?: RetryPolicyInput, workflow?: RetryPolicyInput): RetryPolicy {
  return { ...DEFAULT_RETRY, ...strip(workflow), ...strip(step) };
}

function strip(p?: RetryPolicyInput): Partial<RetryPolicy> {
  const out: Partial<RetryPolicy> = {};
  if (!p) return out;
  for (const [k, v] of Object.entries(p)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

/** Whether another attempt is allowed after `attempt` (counted from the last requeue) failed. */
export function shouldRetry(
  policy: RetryPolicy,
  attempt: number,
  error: { code?: string | undefined; retryable?: boolean | undefined },
): boolean {
  if (error.retryable === false) return false;
  if (error.code !== undefined && policy.nonRetryable.includes(error.code)) return false;
  return attempt < policy.maxAttempts;
}

/**
 * Delay before the attempt after `attempt`: exponential, capped, with jitter drawn from a hash of
 * instance, step and attempt — so the same history always yields the same timers.
 */
export function backoffMs(policy: RetryPolicy, instanceId: string, stepId: string, attempt: number): number {
  const base = Math.min(policy.maxMs, policy.initialMs * policy.factor ** (attempt - 1));
  const unit = fnv1a(`${instanceId}\u0000${stepId}\u0000${attempt}`) / 0x100000000;
  const scaled = base * (1 - policy.jitter + 2 * policy.jitter * unit);
  return Math.max(0, Math.min(policy.maxMs, Math.round(scaled)));
}
