import type { Issue } from '../../errors.js';
import * as z from '../../mini-schema.js';
import { CHILD_HANDLER } from '../../snapshot.js';
import { conditionIssues, conditionPaths } from '../condition.js';
import { pathIssues } from '../data-path.js';
import { limitField, type RateLimitField } from '../flow-limits.js';
import { defineKind } from '../kind.js';
import {
  conditionSchema,
  failurePolicySchema,
  inputMappingSchema,
  integer,
  linkedFields,
  mappingPaths,
  millis,
  offloadSchema,
  opt,
  pathString,
  retryPolicySchema,
  stepId,
} from '../step-fields.js';

/** Roots an item's input mapping may read besides `input` and `outputs`. */
export const ITEM_ROOTS = ['item', 'index'] as const;

/** Default `maxConcurrency` of a map step. */
export const DEFAULT_MAP_CONCURRENCY = 10;

/**
 * `map`: runs one handler (or one child workflow) per element of the array at `items`, at most
 * `maxConcurrency` at a time, in index order; tolerates `tolerated` failures; stops dispatching once
 * an item's result meets `until`; its output is the results in item order (`results: 'collect'`,
 * the default for handlers) or a summary.
 */
export const map = defineKind(
  'map',
  linkedFields,
  {
    items: pathString,
    handler: opt(stepId),
    workflow: opt(stepId),
    version: opt(integer(1, 1_000_000)),
    /** Each item's input: paths from `item`, `index`, `input` or `outputs` (default: the item). */
    input: opt(inputMappingSchema),
    maxConcurrency: opt(integer(1, 10_000)),
    tolerated: opt(z.strictObject({ count: opt(integer(0, 10_000_000)), percent: opt(integer(0, 100)) })),
    results: opt(z.literal(['collect', 'discard'])),
    /** A condition on an item's `result` and `index`: once one meets it, no further item is dispatched. */
    until: opt(conditionSchema),
    retry: opt(retryPolicySchema),
    timeoutMs: opt(millis(1)),
    compensate: opt(stepId),
    pivot: opt(z.boolean()),
    onFailure: opt(failurePolicySchema),
    offload: opt(offloadSchema),
    /** Handler maps: at most `limit` item attempts at once per key value (which may read `item`, `index`). */
    concurrency: opt(limitField),
    /** Handler maps: at most `limit` item attempt starts per key value in any window of `periodMs`. */
    rateLimit: opt(limitField as unknown as RateLimitField),
  },
  {
    issues: (step, at) => {
      const out: Issue[] = [];
      if ((step.handler === undefined) === (step.workflow === undefined))
        out.push({ path: at, message: 'map needs exactly one of handler or workflow' });
      if (step.version !== undefined && step.workflow === undefined)
        out.push({ path: `${at}.version`, message: 'version applies to a workflow map' });
      if (step.retry !== undefined && step.workflow !== undefined)
        out.push({ path: `${at}.retry`, message: 'a workflow map does not retry items: its children do' });
      out.push(...pathIssues(step.items).map((message) => ({ path: `${at}.items`, message })));
      for (const { path, at: where } of mappingPaths(step.input, `${at}.input`))
        out.push(...itemPathIssues(path).map((message) => ({ path: where, message })));
      if (step.until !== undefined) out.push(...untilIssues(step.until, `${at}.until`));
      return out;
    },
    // Only the paths into the workflow's data: `item` and `index` are the map's own.
    paths: (step, at) => [
      { path: step.items, at: `${at}.items` },
      ...mappingPaths(step.input, `${at}.input`).filter((p) => !isItemPath(p.path)),
    ],
    handlers: (step) => [
      ...(step.handler === undefined ? [] : [step.handler]),
      ...(step.compensate === undefined ? [] : [step.compensate]),
    ],
    workflows: (step) => (step.workflow === undefined ? [] : [step.workflow]),
    pivot: (step) => step.pivot === true,
    compensator: (step) => step.compensate ?? (step.workflow === undefined ? undefined : CHILD_HANDLER),
    // Items that completed before the step failed are undone with it.
    compensatesOnFailure: (step) => step.compensate !== undefined || step.workflow !== undefined,
    failurePolicy: (step) => step.onFailure,
  },
);

/** Whether a mapping path reads the map's own `item` or `index`. */
export function isItemPath(path: string): boolean {
  const root = path.split('.')[0];
  return root === 'item' || root === 'index';
}

/** Problems with a map's path, which may also read its `item` and `index`. */
export function itemPathIssues(path: string): string[] {
  if (!isItemPath(path)) return pathIssues(path);
  const parts = path.split('.');
  if (parts[0] === 'index' && parts.length > 1) return [`path "${path}": index is a number`];
  return pathIssues(['input', ...parts.slice(1)].join('.')).map((m) => m.replace('"input', `"${parts[0]}`));
}

/** Problems with a map's `until`: a condition whose paths start with `result` (an item's result) or `index`. */
function untilIssues(cond: unknown, at: string): Issue[] {
  // The condition's own checks, but for the roots: `until` reads an item's result, not the data.
  const out = conditionIssues(cond, at).filter((i) => !i.message.includes(' must start with '));
  for (const { path, at: where } of conditionPaths(cond, at)) {
    const parts = path.split('.');
    if (parts[0] !== 'result' && parts[0] !== 'index')
      out.push({ path: where, message: `path "${path}" must start with result or index` });
    else if (parts[0] === 'index' && parts.length > 1)
      out.push({ path: where, message: `path "${path}": index is a number` });
  }
  return out;
}

/** How many failed items a map step tolerates out of `total`. */
export function toleratedFailures(
  step: { tolerated?: { count?: number | undefined; percent?: number | undefined } | undefined },
  total: number,
): number {
  const t = step.tolerated;
  if (!t) return 0;
  const byPercent = t.percent === undefined ? 0 : Math.floor((total * t.percent) / 100);
  return Math.max(t.count ?? 0, byPercent);
}
