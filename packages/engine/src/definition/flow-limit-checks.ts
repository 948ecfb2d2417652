import type { Issue } from '../errors.js';
import * as z from '../mini-schema.js';
import { integer, millis, parseWith, text } from '../schema-kit.js';
import { MAX_PRIORITY } from '../snapshot.js';
import { inputPathIssues } from './builder-checks.js';
import type { CompiledWorkflow } from './compile.js';
import { pathIssues } from './data-path.js';
import { declaredSchemas } from './declared-schemas.js';
import { type FlowLimit, hasLimits, limitList, type StepLimits } from './flow-limits.js';
import { isItemPath, itemPathIssues } from './kinds/map.js';
import { referenceIssues } from './references.js';

// What `flowControl` checks of a definition's limits where it is passed (the core parses only
// their shape): each limit's form, its key path's syntax, and where a key may read.

const opt = z.optional;
/** Most limits one step (or the workflow) may list. */
export const MAX_FLOW_LIMITS = 8;
/** A limit: a positive integer. */
const limit = integer(1, 1_000_000_000);

/** A concurrency limit, checked. */
const flowLimitSchema = z.strictObject({ key: opt(text(1, 500)), limit, scope: opt(text(1, 500)) });
/** A rate limit, checked. */
const rateLimitSchema = z.strictObject({
  key: opt(text(1, 500)),
  limit,
  periodMs: millis(1),
  scope: opt(text(1, 500)),
});

/** A workflow's priority: an integer from 0 to 1000 (higher first), or a data path to one. */
const prioritySchema = z.union([integer(0, MAX_PRIORITY), text(1, 500)]);
/** A workflow's fairness: the key whose values take turns. */
const fairnessSchema = z.strictObject({ key: text(1, 500) });

/**
 * Problems with one limit or a list of them at `at`: checked as the one form its value has (not
 * as a union, whose failure would only say that neither form matched), each issue at its own path.
 */
function formIssues(schema: z.Schema, value: unknown, at: string, list = true): Issue[] {
  const form =
    list && Array.isArray(value)
      ? z.array(schema).check(z.minLength(1), z.maxLength(MAX_FLOW_LIMITS))
      : schema;
  const r = parseWith(form as z.Schema, value);
  return r.ok ? [] : r.issues.map((i) => ({ path: i.path ? `${at}.${i.path}` : at, message: i.message }));
}

/** Problems with the key paths of some limits at `at` (`''` or `steps.<id>.`): `paths` checks each one (the roots it may read). */
function keyIssues(limits: StepLimits, at: string, paths: (path: string) => string[]): Issue[] {
  return limitPaths(limits, at.slice(0, -1)).flatMap((p) =>
    paths(p.path).map((message) => ({ path: p.at.replace(/^\./, ''), message: `key: ${message}` })),
  );
}

/**
 * The key paths of a step's limits, each with where it is written (for the reference checks);
 * what is not a path yet is left to `flowControl`'s checks.
 */
export function limitPaths(step: StepLimits, at: string): Array<{ path: string; at: string }> {
  const out: Array<{ path: string; at: string }> = [];
  for (const field of ['concurrency', 'rateLimit'] as const) {
    const many = Array.isArray(step[field]);
    limitList<FlowLimit>(step[field]).forEach((l, i) => {
      if (typeof l?.key === 'string')
        out.push({ path: l.key, at: `${at}.${field}${many ? `.${i}` : ''}.key` });
    });
  }
  return out;
}

/** Problems with a workflow limit's key path: it may read only `input`. */
export function workflowKeyIssues(path: string): string[] {
  const problems = pathIssues(path);
  if (problems.length === 0 && path.split('.')[0] !== 'input')
    problems.push(`path "${path}" must start with input: an instance is admitted before any step runs`);
  return problems;
}

/**
 * Every problem with a definition's flow control (empty when fine): each limit's form (`limit` and
 * `periodMs` positive integers), key paths (a map's may read `item` and `index`; a workflow's only
 * `input`, as its priority and fairness paths; `outputs.<step>` only of steps that come earlier;
 * `input.…` only what a declared input schema has), and limits on a workflow map, which has no
 * attempts of its own to limit.
 */
export function limitIssues({ definition: def, regions }: CompiledWorkflow): Issue[] {
  const out: Issue[] = [];
  let formsOk = true;
  const check = (limits: StepLimits, at: string, paths: (path: string) => string[]) => {
    const forms = [
      ...(limits.concurrency === undefined
        ? []
        : formIssues(flowLimitSchema, limits.concurrency, `${at}concurrency`)),
      ...(limits.rateLimit === undefined
        ? []
        : formIssues(rateLimitSchema, limits.rateLimit, `${at}rateLimit`)),
    ];
    if (forms.length) formsOk = false;
    out.push(...(forms.length ? forms : keyIssues(limits, at, paths)));
  };
  check({ concurrency: def.concurrency }, '', workflowKeyIssues);
  const header = [
    ...(def.priority === undefined ? [] : formIssues(prioritySchema, def.priority, 'priority', false)),
    ...(def.fairness === undefined ? [] : formIssues(fairnessSchema, def.fairness, 'fairness', false)),
  ];
  out.push(...header);
  if (header.length) formsOk = false;
  else
    for (const [at, path] of [
      ['priority', def.priority],
      ['fairness.key', def.fairness?.key],
    ] as const) {
      if (typeof path === 'string')
        for (const message of workflowKeyIssues(path)) out.push({ path: at, message });
    }
  for (const id in def.steps) {
    const step = def.steps[id]! as StepLimits & { kind: string; workflow?: string };
    if (!hasLimits(step)) continue;
    if (step.kind === 'map' && step.workflow !== undefined)
      out.push({
        path: `steps.${id}`,
        message: 'concurrency and rateLimit apply to a handler map: limit the child workflow',
      });
    check(step, `steps.${id}.`, step.kind === 'map' ? itemPathIssues : pathIssues);
  }
  if (out.length || !formsOk) return out;
  // The key paths into the data: steps that come earlier, what the declared input has.
  const stepPaths = (step: object, at: string) =>
    limitPaths(step as StepLimits, at).filter((p) => !isItemPath(p.path));
  out.push(...referenceIssues(def.steps, regions, stepPaths));
  const input = declaredSchemas(def)?.input;
  if (input) {
    const read = [
      ...limitPaths({ concurrency: def.concurrency }, '').map((p) => ({ ...p, at: p.at.slice(1) })),
      ...(typeof def.priority === 'string' ? [{ path: def.priority, at: 'priority' }] : []),
      ...(def.fairness ? [{ path: def.fairness.key, at: 'fairness.key' }] : []),
      ...Object.entries(def.steps).flatMap(([id, s]) => stepPaths(s, `steps.${id}`)),
    ];
    out.push(...inputPathIssues([], input, read));
  }
  return out;
}
