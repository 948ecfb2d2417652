import type { CompiledWorkflow } from '../definition/compile.js';
import type { StepDefinition, StepKind, StepOf } from '../definition/schema.js';
import { RegistryError } from '../errors.js';
import type { Cx, LimitRules, RuleTable, SearchRules, StepRules } from './kinds/step-rules.js';

/** Kinds whose rules come in the `composition` value of `@stepfold/engine`, not with the core. */
export type CompositionKind = 'child' | 'map';

/** The reducer's rules for the given kinds, keyed by kind: one row per kind, each typed by its step. */
export type KindRules<K extends StepKind> = { readonly [P in K]: StepRules<StepOf<P> & { id: string }> };

/**
 * Step kinds beyond the core, as a value: what `kinds: [...]` of `step`, `createRunner` and
 * `createHarness` takes. Passing one changes only the call it is passed to. `K` is the kinds the
 * set brings; plain `KindSet` stands for any set.
 *
 * @example
 * import { composition } from '@stepfold/engine';
 * step(order, null, start, { kinds: [composition] });
 */
export interface KindSet<K extends StepKind = never> {
  /** The name it is exported under (`composition`), for messages and debugging. */
  readonly name: string;
  /** The reducer's rules of each kind the set brings. */
  readonly rules: KindRules<K>;
  /** The reducer's rules of flow limits (`concurrency`, `rateLimit`), when the set brings them (`flowControl`). */
  readonly limits?: LimitRules | undefined;
  /** The rules of search attributes, when the set brings them (`searchAttributes`). */
  readonly search?: SearchRules | undefined;
}

/** Which value of `@stepfold/engine` brings each kind outside the core (and flow limits, search attributes), and what a workflow then has. */
const PROVIDED_BY: Readonly<Record<string, [name: string, what: string]>> = {
  child: ['composition', 'child steps'],
  map: ['composition', 'map steps'],
  limits: ['flowControl', 'flow control'],
  search: ['searchAttributes', 'search attributes'],
};

/**
 * The error for a step whose kind's rules (or a workflow whose flow limits' or search attributes'
 * rules, `limits` and `search`) were not passed in `kinds`.
 */
export function kindNotLoaded(kind: string, workflow?: string): RegistryError {
  const by = PROVIDED_BY[kind];
  const what =
    workflow === undefined
      ? (by?.[1] ?? `a ${kind} step`)
      : `workflow ${workflow} has ${by?.[1] ?? `${kind} steps`}`;
  const how = by
    ? `pass kinds: [${by[0]}] (import { ${by[0]} } from '@stepfold/engine') to createRunner, step or createHarness`
    : `pass the kind set that defines '${kind}' in kinds: [...] to createRunner, step or createHarness`;
  return new RegistryError('KIND_NOT_LOADED', `${what}: ${how}`);
}

/** The rules of a step's kind in this reduction; `KIND_NOT_LOADED` when its set was not passed. */
export function rulesOf(
  cx: Cx,
  def: StepDefinition & { id: string },
): StepRules<StepDefinition & { id: string }> {
  const rules = cx.table.rules[def.kind];
  if (!rules) throw kindNotLoaded(def.kind, cx.wf.definition.name);
  return rules as unknown as StepRules<StepDefinition & { id: string }>;
}

// The last table each workflow was checked against: a memo, so a check runs once per pair.
const checked = new WeakMap<CompiledWorkflow, RuleTable>();

/** A step's (or the workflow's) flow control, as the core reads it: only whether there is any. */
type Limited = { concurrency?: unknown; rateLimit?: unknown; priority?: unknown; fairness?: unknown };

/**
 * Throws `KIND_NOT_LOADED` unless `table` has the rules of every kind the workflow uses, the
 * rules of flow control when it declares any (limits, priority, fairness) and those of search
 * attributes when it declares any; then `INVALID_DEFINITION` when those rules find it wrong (the
 * core parses only their shape).
 */
export function assertKinds(wf: CompiledWorkflow, table: RuleTable): void {
  if (checked.get(wf) === table) return;
  const def = wf.definition as CompiledWorkflow['definition'] & Limited;
  let limited = 'concurrency' in def || 'priority' in def || 'fairness' in def;
  for (const id in def.steps) {
    const step = def.steps[id]! as StepDefinition & Limited;
    if (!table.rules[step.kind]) throw kindNotLoaded(step.kind, def.name);
    limited ||= 'concurrency' in step || 'rateLimit' in step;
  }
  if (limited) {
    if (!table.limits) throw kindNotLoaded('limits', def.name);
    table.limits.check(wf);
  }
  if (def.search !== undefined) {
    if (!table.search) throw kindNotLoaded('search', def.name);
    table.search.check(wf);
  }
  checked.set(wf, table);
}
