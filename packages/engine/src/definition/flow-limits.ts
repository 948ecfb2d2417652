import * as z from 'zod/mini';
import type { Issue } from '../errors.js';
import { integer, millis, parseWith, text } from '../schema-kit.js';
import { pathIssues } from './data-path.js';

// Flow limits as a definition writes them: `concurrency` (task and map steps, and the workflow)
// and `rateLimit` (task and map steps). The reducer resolves them into `FlowNeed`s at dispatch;
// the store counts them.

const opt = z.optional;
/** Most limits one step (or the workflow) may list. */
export const MAX_FLOW_LIMITS = 8;
/** A limit: a positive integer. */
const limit = integer(1, 1_000_000_000);

/** At most `limit` attempts (or instances) at once per value of `key`, counted under `scope`. */
export const flowLimitSchema = z.strictObject({
  key: opt(text(1, 500)),
  limit,
  scope: opt(text(1, 500)),
});

/** At most `limit` attempt starts per value of `key` in any window of `periodMs` (sliding). */
export const rateLimitSchema = z.strictObject({
  key: opt(text(1, 500)),
  limit,
  periodMs: millis(1),
  scope: opt(text(1, 500)),
});

/**
 * One limit or a list of them. Checked as the one form its value has (not as a union, whose failure
 * would only say that neither form matched), each issue at its own path.
 */
function oneOrMany<T extends z.ZodMiniType>(schema: T) {
  const many = z.array(schema).check(z.minLength(1), z.maxLength(MAX_FLOW_LIMITS));
  return z
    .custom<z.infer<T> | z.infer<T>[]>(() => true)
    .check(
      z.check((payload) => {
        const form = (Array.isArray(payload.value) ? many : schema) as z.ZodMiniType;
        const r = parseWith(form, payload.value);
        if (r.ok) return;
        for (const i of r.issues) {
          const path = i.path === '' ? [] : i.path.split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : p));
          payload.issues.push({ code: 'custom', message: i.message, path, input: payload.value } as never);
        }
      }),
    );
}

/** A step's or a workflow's `concurrency`. */
export const concurrencyField = oneOrMany(flowLimitSchema);
/** A step's `rateLimit`. */
export const rateLimitField = oneOrMany(rateLimitSchema);

/** A concurrency limit as written. */
export type FlowLimit = z.infer<typeof flowLimitSchema>;
/** A rate limit as written. */
export type RateLimit = z.infer<typeof rateLimitSchema>;

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

/** The key paths of a step's limits, each with where it is written (for the reference checks). */
export function limitPaths(step: StepLimits, at: string): Array<{ path: string; at: string }> {
  const out: Array<{ path: string; at: string }> = [];
  for (const field of ['concurrency', 'rateLimit'] as const) {
    const list = limitList<FlowLimit>(step[field]);
    const many = Array.isArray(step[field]);
    list.forEach((l, i) => {
      if (l.key !== undefined) out.push({ path: l.key, at: `${at}.${field}${many ? `.${i}` : ''}.key` });
    });
  }
  return out;
}

/**
 * Problems with the key paths of a step's (or the workflow's) limits: `paths` checks each one
 * (the roots it may read); empty when fine.
 */
export function limitIssues(
  step: StepLimits,
  at: string,
  paths: (path: string) => string[] = pathIssues,
): Issue[] {
  return limitPaths(step, at).flatMap(({ path, at: where }) =>
    paths(path).map((message) => ({ path: where, message: `key: ${message}` })),
  );
}

/** Problems with a workflow limit's key path: it may read only `input`. */
export function workflowKeyIssues(path: string): string[] {
  const problems = pathIssues(path);
  if (problems.length === 0 && path.split('.')[0] !== 'input')
    problems.push(`path "${path}" must start with input: an instance is admitted before any step runs`);
  return problems;
}
