import * as z from '../mini-schema.js';

// Flow limits as a definition writes them: `concurrency` (task and map steps, and the workflow)
// and `rateLimit` (task and map steps). The core parses only their shape, so a definition with
// limits parses anywhere; `flow-limit-checks.ts` checks them where `flowControl` is passed.

/** At most `limit` attempts (or instances) at once per value of `key`, counted under `scope`. */
export interface FlowLimit {
  key?: string | undefined;
  limit: number;
  scope?: string | undefined;
}
/** At most `limit` attempt starts per value of `key` in any window of `periodMs` (sliding). */
export interface RateLimit extends FlowLimit {
  periodMs: number;
}

/**
 * A step's `concurrency` or `rateLimit` (or the workflow's `concurrency`), as the core parses it:
 * anything (`flowControl` checks it where it is passed, and the core refuses a definition with
 * any without it).
 */
export const limitField = z.unknown() as z.Schema<FlowLimit | FlowLimit[]>;
/** {@link limitField}, typed as rate limits (the same schema: a cast, no code). */
export type RateLimitField = z.Schema<RateLimit | RateLimit[]>;

/** The limits of a field as a list (none: empty). */
export function limitList<T>(field: T | readonly T[] | undefined): readonly T[] {
  if (field === undefined) return [];
  return Array.isArray(field) ? field : [field as T];
}

/** A step's limits as written: its concurrency limits, then its rate limits. */
export interface StepLimits {
  concurrency?: FlowLimit | FlowLimit[] | undefined;
  rateLimit?: RateLimit | RateLimit[] | undefined;
}

/** Whether a step (or workflow) has any flow limit. */
export function hasLimits(step: StepLimits): boolean {
  return step.concurrency !== undefined || step.rateLimit !== undefined;
}
