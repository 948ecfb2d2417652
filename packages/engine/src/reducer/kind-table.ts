import type { CompiledWorkflow } from '../definition/compile.js';
import type { StepDefinition, StepKind, StepOf } from '../definition/schema.js';
import { RegistryError } from '../errors.js';
import type { StepRules } from './kinds/step-rules.js';

/**
 * Kinds whose reducer rules live in `@stepfold/engine/composition`, not the main entry (which is
 * size-capped for Workers): importing that entry once registers them.
 */
export type CompositionKind = 'child' | 'map';

/** The reducer's rules for the given kinds, keyed by kind: one row per kind, each typed by its step. */
export type KindRules<K extends StepKind> = { readonly [P in K]: StepRules<StepOf<P> & { id: string }> };

// Filled by `kinds/index.ts` (the core kinds) and the composition entry; read when a rule runs.
const table: Partial<Record<StepKind, StepRules<never>>> = {};

/** Registers reducer rules for kinds (the core ones at load; composition's when its entry is imported). */
export function registerKindRules(rows: Partial<KindRules<StepKind>>): void {
  Object.assign(table, rows);
}

/** The live table of registered rules, by kind (what the flow reads). */
export const REGISTERED_RULES: { readonly [kind: string]: StepRules<never> } = table;

/** The error for a step whose kind's rules are not loaded. */
export function kindNotLoaded(kind: string, workflow?: string): RegistryError {
  const what = workflow === undefined ? `a ${kind} step` : `workflow ${workflow} has ${kind} steps`;
  return new RegistryError(
    'KIND_NOT_LOADED',
    `${what}: import '@stepfold/engine/composition' once (child and map steps live in that entry)`,
  );
}

/** The rules of a step's kind; `KIND_NOT_LOADED` when its entry was not imported. */
export function rulesOf(def: StepDefinition & { id: string }): StepRules<StepDefinition & { id: string }> {
  const rules = table[def.kind];
  if (!rules) throw kindNotLoaded(def.kind);
  return rules as unknown as StepRules<StepDefinition & { id: string }>;
}

const ready = new WeakSet<CompiledWorkflow>();

/** Throws `KIND_NOT_LOADED` unless every kind the workflow uses has its rules (checked once per definition). */
export function assertKindsLoaded(wf: CompiledWorkflow): void {
  if (ready.has(wf)) return;
  for (const id in wf.definition.steps) {
    const kind = wf.definition.steps[id]!.kind;
    if (!table[kind]) throw kindNotLoaded(kind, wf.definition.name);
  }
  ready.add(wf);
}
