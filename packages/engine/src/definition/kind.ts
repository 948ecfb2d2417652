import type { Issue } from '../errors.js';
import * as z from '../mini-schema.js';
import { nextOf } from './step-fields.js';

/** A failure policy: roll back (`compensate`), park in `dlq`, or `fail` at once. */
export type FailurePolicyName = 'compensate' | 'dlq' | 'fail';

/**
 * What the definition layer knows about one step kind: its JSON schema and the static facts every
 * check reads from it. The reducer's rules for the kind live in `reducer/kinds/<kind>.ts` and its
 * diagram shape in `diagram/kinds.ts` (see the README for adding a kind).
 */
export interface DefinitionKind<K extends string = string, S = unknown> {
  kind: K;
  /** The kind's schema (strict: unknown keys are errors); its output is `S`. */
  schema: z.Schema;
  /** Whether the builder links this step to the one added after it: whether its schema has a `next`. */
  links: boolean;
  /** Steps this one can continue to in its own region (next, choice branches, timeout target). */
  targets(step: S): string[];
  /** Entry steps of the branches this step forks (parallel). */
  forks?(step: S): string[];
  /** Whether the step waits for the outside world, so a cycle through it cannot spin within one event. */
  waits?: boolean | undefined;
  /** Build-time problems the schema cannot see; `at` is the step's path (`steps.<id>`). */
  issues?(step: S, at: string): Issue[];
  /** Data paths the step reads (mappings, conditions, `until`), with where each is written. */
  paths?(step: S, at: string): Array<{ path: string; at: string }>;
  /** Handler names the step calls (a runner must register each). */
  handlers?(step: S): string[];
  /** Workflows the step starts as child instances (a runner must register each). */
  workflows?(step: S): string[];
  /** The signal name the step listens for while active. */
  listensFor?(step: S & { id: string }): string | undefined;
  /** Whether completing the step is a point of no return (nothing before it rolls back). */
  pivot?(step: S): boolean;
  /** The handler that undoes the step once it completed, if any. */
  compensator?(step: S): string | undefined;
  /** Whether a failed attempt of the step is undone too (it may have left partial effects). */
  compensatesOnFailure?(step: S): boolean;
  /** The step's own failure policy, over the workflow's. */
  failurePolicy?(step: S): FailurePolicyName | undefined;
}

/** The facts a kind's module states: `links` comes from its shared fields, `targets` defaults to its `next`. */
export type KindFacts<K extends string, S> = Omit<
  DefinitionKind<K, S>,
  'kind' | 'schema' | 'links' | 'targets'
> &
  Partial<Pick<DefinitionKind<K, S>, 'targets'>>;

/** The schema of a kind: the shared `base` fields, its literal `kind`, then its `own` fields; strict. */
export type KindSchema<K extends string, B extends z.Shape, O extends z.Shape> = z.ObjectSchema<
  B & { kind: z.LiteralSchema<K> } & O
>;

/**
 * Declares a step kind: its name (written once), its fields (the shared `linkedFields` or
 * `endFields`, and its own), and the facts about it, typed by what its schema accepts.
 */
export function defineKind<const K extends string, B extends z.Shape, O extends z.Shape>(
  kind: K,
  base: B,
  own: O,
  facts: NoInfer<KindFacts<K, z.infer<KindSchema<K, B, O>>>> = {},
): DefinitionKind<K, z.infer<KindSchema<K, B, O>>> & { schema: KindSchema<K, B, O> } {
  // The shared fields first, then `kind`: a parsed step's keys come in the schema's order.
  const schema = z.strictObject({ ...base, kind: z.literal(kind), ...own }) as KindSchema<K, B, O>;
  return {
    kind,
    schema,
    // A kind without `next` ends its path or picks its successors: nothing to link.
    links: 'next' in base,
    targets: nextOf as (step: z.infer<KindSchema<K, B, O>>) => string[],
    ...facts,
  };
}

/** Any kind's definition module, whatever its step type: what a list of kinds holds. */
export type AnyDefinitionKind = DefinitionKind<string, never> & { schema: z.Schema<{ kind: string }> };

/** A non-empty list of kinds' definition modules (the step union needs one member at least). */
export type KindList = readonly [AnyDefinitionKind, ...AnyDefinitionKind[]];

/** The schemas of a list of kinds, in list order. */
type SchemasOf<L extends KindList> = { -readonly [I in keyof L]: L[I]['schema'] };

/** The step schema a list of kinds yields: the union of their schemas (each with its literal `kind`). */
export type StepUnion<L extends KindList> = z.UnionSchema<SchemasOf<L>>;

/** The table a list of kinds yields: each kind's module under its name, in list order. */
export type KindTable<L extends KindList> = { readonly [K in L[number] as K['kind']]: K };

// `kinds/index.ts` feeds the built-in list to these two, so a kind added to that list is known to
// every check and nothing else lists it; a test feeds them a list with a kind of its own.

/** The schema of one step of any kind in `list`, in list order. */
export function stepUnion<const L extends KindList>(list: L): StepUnion<L> {
  // A plain union, not a discriminated one: `compileWorkflow` parses each step with its own kind's
  // schema (its precise issues), so this one only ever sees steps that already passed.
  return z.union(list.map((k) => k.schema) as never) as StepUnion<L>;
}

/** The kinds of `list` keyed by name (in list order: unknown-kind messages list the names so). */
export function kindTable<const L extends KindList>(list: L): KindTable<L> {
  return Object.fromEntries(list.map((k) => [k.kind, k])) as KindTable<L>;
}
