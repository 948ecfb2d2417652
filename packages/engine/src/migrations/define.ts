import type { Draft } from 'immer';
import { type CompiledWorkflow, compileWorkflow } from '../definition/compile.js';
import type { DefinitionInput, WorkflowDefinition } from '../definition/schema.js';
import type { InputOf, NameOf, StepIdOf, VersionOf } from '../definition/typed-definition.js';
import { type Issue, ValidationError } from '../errors.js';
import type { SignalRecord, Snapshot } from '../snapshot.js';

/** A definition as a migration takes it: the typed builder's output or JSON. */
export type MigrationDefinition = DefinitionInput | WorkflowDefinition;

/**
 * Old step id → new step id, or `null` for a step the new version removed. With typed
 * definitions the keys are the old version's step ids and the values the new one's, so a typo
 * fails to compile. Unlisted ids keep their id when the new version has it.
 */
export type StepMap<F, T> = { [K in StepIdOf<F>]?: StepIdOf<T> | null };

/** The workflow input as the recipe sees it: the old input, with the new version's fields optional. */
export type MigrationInput<F, T> =
  unknown extends InputOf<F>
    ? // biome-ignore lint/suspicious/noExplicitAny: an untyped definition's input is whatever was stored
      any
    : InputOf<F> & Partial<InputOf<T>>;

/** The stored data a recipe may change: the input, step outputs keyed by their new ids, pending signals. */
export interface MigrationData<I = unknown, Id extends string = string> {
  input: I;
  /** Outputs of the steps that have one, under their new ids (the new definition's step ids when typed). */
  outputs: { [K in Id]?: unknown };
  /** Signals buffered in the instance, oldest first. */
  signals: SignalRecord[];
}

/** What a recipe knows besides the data: the instance, as stored before the move, and the time. */
export interface MigrationContext {
  readonly id: string;
  /** The snapshot on the old version (frozen; read removed steps' outputs from here). */
  readonly from: Readonly<Snapshot>;
  /** The migration's time (epoch ms). */
  readonly at: number;
}

/** What {@link defineMigration} takes: the two versions, the step map, the optional data recipe. */
export interface MigrationSpec<F extends MigrationDefinition, T extends MigrationDefinition>
  extends MigrationSpecBase<F, T> {
  to: T;
}

/** {@link MigrationSpec} but its `to`, which `defineMigration` types with its check. */
interface MigrationSpecBase<F extends MigrationDefinition, T extends MigrationDefinition> {
  from: F;
  steps?: StepMap<F, T> | undefined;
  /** An immer recipe: assign to the draft; the engine produces the new data from it. */
  data?:
    | ((draft: Draft<MigrationData<MigrationInput<F, T>, StepIdOf<T>>>, ctx: MigrationContext) => void)
    | undefined;
}

/** A definition's literal name, or `never` when the types do not see it. */
type LiteralName<D> = D extends { readonly name: infer V } ? (string extends V ? never : V) : never;
/** The name the types see: the typed builder's, else a literal `name`. */
type SeenName<D> = string extends NameOf<D> ? LiteralName<D> : NameOf<D>;
/** The version the types see (the typed builder's, or a literal `version`), or `never`. */
type SeenVersion<D> = number extends VersionOf<D> ? never : VersionOf<D>;
type Digits<S extends string> = S extends `${infer H}${infer R}` ? [H, ...Digits<R>] : [];
/** Whether digit `A` is above digit `B`. */
type DigitAbove<A, B> = '9876543210' extends `${string}${A & string}${string}${B & string}${string}`
  ? true
  : false;
/** Whether digits `A` are above digits `B`, of the same length. */
type SameLengthAbove<A extends string[], B extends string[]> = A extends [
  infer a,
  ...infer ra extends string[],
]
  ? B extends [infer b, ...infer rb extends string[]]
    ? a extends b
      ? SameLengthAbove<ra, rb>
      : DigitAbove<a, b>
    : false
  : false;
/** A tuple of as many `unknown` as `T` has elements (to compare lengths only). */
type Slots<T extends unknown[]> = { [K in keyof T]: unknown };
/** Whether the positive integer literal `T` is above `F`: more digits, or as many and above. */
type Above<T extends number, F extends number> =
  Slots<Digits<`${T}`>> extends [...Slots<Digits<`${F}`>>, unknown, ...unknown[]]
    ? true
    : Slots<Digits<`${F}`>> extends [...Slots<Digits<`${T}`>>, unknown, ...unknown[]]
      ? false
      : SameLengthAbove<Digits<`${T}`>, Digits<`${F}`>>;

/**
 * The rule of {@link defineMigration} the types can see broken, as a message, or `never`: the same
 * workflow (when both names are seen), a version above `from`'s (when both versions are seen: the
 * typed builder's, or literal types).
 */
export type MigrationProblem<F, T> = [SeenName<F>, SeenName<T>] extends [infer A, infer B]
  ? [A] extends [never]
    ? VersionProblem<F, T>
    : [B] extends [never]
      ? VersionProblem<F, T>
      : [A] extends [B]
        ? VersionProblem<F, T>
        : 'from and to are different workflows: a migration moves instances between versions of one'
  : never;
type VersionProblem<F, T> = [SeenVersion<F>, SeenVersion<T>] extends [
  infer A extends number,
  infer B extends number,
]
  ? [A] extends [never]
    ? never
    : [B] extends [never]
      ? never
      : Above<B, A> extends true
        ? never
        : "to's version is not above from's: a migration moves instances to a newer version"
  : never;

/**
 * What `to` must be: the definition given, or (a rule broken) the message, so the compiler's first
 * line is `… is not assignable to type '"<the message>"'` and not a dump of the definition's type.
 */
export type CheckedTo<F, T> = [MigrationProblem<F, T>] extends [never] ? T : MigrationProblem<F, T>;

/** A validated migration between two versions of one workflow (build it with {@link defineMigration}). */
export interface Migration<F = unknown, T = unknown> {
  readonly from: CompiledWorkflow;
  readonly to: CompiledWorkflow;
  /** Every old step id with where it goes: a new step id, or null (removed). */
  readonly steps: Readonly<Record<string, string | null>>;
  /** The new ids no old step maps onto. */
  readonly added: readonly string[];
  readonly data?: ((draft: Draft<MigrationData>, ctx: MigrationContext) => void) | undefined;
  /** Phantom: the definitions' types (never present at runtime). */
  readonly types?: { from: F; to: T } | undefined;
}

/**
 * Validates a migration between two versions of one workflow and returns it. Throws
 * `INVALID_MIGRATION` listing every problem: a key that is not a step of `from`, a target that is
 * not a step of `to`, two old steps onto one new, different workflow names, `to.version` not
 * above `from.version`.
 *
 * @example
 * const toV2 = defineMigration({
 *   from: orderV1,
 *   to: orderV2,
 *   steps: { approve: 'review', legacy: null },
 *   data(draft) {
 *     draft.input.currency ??= 'EUR';
 *   },
 * });
 */
export function defineMigration<const F extends MigrationDefinition, const T extends MigrationDefinition>(
  spec: MigrationSpecBase<F, T> & { to: CheckedTo<F, T> },
): Migration<F, T> {
  const from = compileWorkflow(spec.from);
  const to = compileWorkflow(spec.to as T);
  const a = from.definition;
  const b = to.definition;
  const issues: Issue[] = [];
  if (a.name !== b.name)
    issues.push({ path: 'to.name', message: `migrates ${a.name} to another workflow, ${b.name}` });
  if (b.version <= a.version)
    issues.push({ path: 'to.version', message: `v${b.version} is not above v${a.version}` });
  const given = (spec.steps ?? {}) as Record<string, string | null | undefined>;
  for (const [id, target] of Object.entries(given)) {
    if (!Object.hasOwn(a.steps, id))
      issues.push({ path: `steps.${id}`, message: `"${id}" is not a step of ${a.name} v${a.version}` });
    if (target !== null && target !== undefined && !Object.hasOwn(b.steps, target))
      issues.push({
        path: `steps.${id}`,
        message: `"${target}" is not a step of ${b.name} v${b.version}`,
      });
  }
  const steps: Record<string, string | null> = {};
  const onto = new Map<string, string[]>();
  for (const id of Object.keys(a.steps)) {
    const listed = given[id];
    const target = listed !== undefined ? listed : Object.hasOwn(b.steps, id) ? id : null;
    steps[id] = target;
    if (target !== null) onto.set(target, [...(onto.get(target) ?? []), id]);
  }
  for (const [target, ids] of onto) {
    if (ids.length > 1)
      issues.push({
        path: `steps.${ids[1]}`,
        message: `${ids.map((i) => `"${i}"`).join(' and ')} all map onto "${target}" (map or remove the others)`,
      });
  }
  if (issues.length) throw new ValidationError('INVALID_MIGRATION', 'invalid migration', issues);
  const added = Object.keys(b.steps).filter((id) => !onto.has(id));
  return Object.freeze({
    from,
    to,
    steps: Object.freeze(steps),
    added: Object.freeze(added),
    data: spec.data as Migration['data'],
  });
}

/** `v<version>` of a compiled definition, as reasons name versions. */
export function versionName(wf: CompiledWorkflow): string {
  return `v${wf.definition.version}`;
}
