import type { Issue } from '../errors.js';
import * as z from '../mini-schema.js';
import { bounded, integer, millis, idString as stepId, text } from '../schema-kit.js';
import { pathIssues } from './data-path.js';

// Fields several step kinds share, so each kind's module can build its schema from them.

/** Default handler deadline when neither the step nor the workflow sets `timeoutMs`: 5 minutes. */
export const DEFAULT_TIMEOUT_MS = 300_000;

/** Shorthand for `z.optional`. */
export const opt = z.optional;

/** A dotted data path such as `input.order.id` or `outputs.reserve.sku`. */
export const pathString = text(1, 500);

/** Retry policy; omitted fields take the workflow's or the built-in defaults. */
export const retryPolicySchema = z.strictObject({
  maxAttempts: opt(integer(1, 10_000)),
  initialMs: opt(millis()),
  factor: opt(bounded(1, 100)),
  maxMs: opt(millis()),
  jitter: opt(bounded(0, 1)),
  nonRetryable: opt(z.array(text(1, 200))),
});

/** What happens when a step fails for good. */
export const failurePolicySchema = z.literal(['compensate', 'dlq', 'fail']);

/** Keys a mapping object may not use: they could reach an object's prototype. */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Where a handler's input comes from: one data path, or an object of named paths. */
export const inputMappingSchema = z.union([
  pathString,
  // A record of paths, as an object whose every key is a path. A reserved key aborts, as a record's
  // key issue does, so the union reports what it did with a record.
  z.catchall(z.object({}), pathString).check(
    z.refine((o) => !Object.keys(o).some((k) => RESERVED_KEYS.has(k)), {
      message: 'reserved key (__proto__, constructor, prototype)',
      abort: true,
    }),
  ),
]);

/**
 * A step's payload offloading (it applies when the runner has payloads): `{ keep: [...] }` names
 * the top-level output fields kept inline beside the reference, for conditions and other paths the
 * reducer reads; `false` keeps the output inline whatever its size (a map's `items`, say).
 */
export const offloadSchema = z.union([
  z.literal(false),
  z.strictObject({
    keep: opt(z.array(text(1, 200)).check(z.maxLength(32))),
  }),
]);

/** A condition: JSON-Logic-like data, checked by `conditionIssues` and never evaluated as code. */
export const conditionSchema = z.custom<Condition>((v) => typeof v === 'object' && v !== null);

/** A safe predicate over workflow data (see `condition.ts` for the operators). */
export type Condition =
  | { var: string }
  | { '==': [Operand, Operand] }
  | { '!=': [Operand, Operand] }
  | { '<': [Operand, Operand] }
  | { '<=': [Operand, Operand] }
  | { '>': [Operand, Operand] }
  | { '>=': [Operand, Operand] }
  | { in: [Operand, Operand] }
  | { and: Condition[] }
  | { or: Condition[] }
  | { '!': Condition }
  | { exists: string };

/** A literal JSON value or a `{ var: path }` reference. */
export type Operand =
  | string
  | number
  | boolean
  | null
  | { var: string }
  | Array<string | number | boolean | null>;

/** Fields of every step that continues to a `next` step. */
export const linkedFields = { id: opt(stepId), next: opt(stepId), description: opt(text(0, 2000)) };

/** Fields of a step that ends its path or picks its own successors (no `next`). */
export const endFields = { id: linkedFields.id, description: linkedFields.description };

/** The `next` of a step, as a list of successors. */
export function nextOf(step: { next?: string | undefined }): string[] {
  return step.next === undefined ? [] : [step.next];
}

/** The paths of a mapping (a path or an object of paths), each with where it is written. */
export function mappingPaths(mapping: unknown, at: string): Array<{ path: string; at: string }> {
  if (typeof mapping === 'string') return [{ path: mapping, at }];
  if (typeof mapping !== 'object' || mapping === null) return [];
  return Object.entries(mapping).map(([k, path]) => ({ path: path as string, at: `${at}.${k}` }));
}

/** Problems with the data paths of a mapping (a path or an object of paths), reported at `at`. */
export function mappingIssues(mapping: unknown, at: string): Issue[] {
  const paths = typeof mapping === 'string' ? [mapping] : mapping ? Object.values(mapping as object) : [];
  return paths.flatMap((p) => pathIssues(p as string).map((message) => ({ path: at, message })));
}

export { integer, millis, stepId, text };
