import type { WorkflowDefinition } from './schema.js';

/** What a handler is known to take and return, as the builder records it. */
export interface HandlerSpec {
  input: unknown;
  output: unknown;
}

/** The payload of a human step's decision signal. */
export type HumanDecision = ({ decision: 'approve' | 'reject' } | { approved: boolean }) &
  Record<string, unknown>;

declare const typesKey: unique symbol;

/** The types a typed builder gathered, carried by a built definition as a phantom (never present at runtime). */
export interface DefinitionTypes {
  name: string;
  /** The version as a literal type (`workflow('order', 2)` gives `2`; `number` when not known). */
  version?: number;
  input: unknown;
  output: unknown;
  outputs: unknown;
  signals: unknown;
  handlers: unknown;
  /** Every step id (`string` when not known). */
  steps: string;
  /** The workflows its child and map steps start (a runner must register them too). */
  children?: string;
  /** The step kinds beyond the core it uses (`'child' | 'map'`): a runner must be given them in `kinds`. */
  kinds?: string;
  /** Its child and map steps that start workflows, each with the name of the workflow it starts. */
  childSteps?: ChildStep;
  /**
   * The steps whose tasks report results (task steps, handler maps), each with what one of its
   * tasks reports (a map's: one item's result): the steps a harness completes and fails.
   */
  tasks?: unknown;
}

/**
 * A step that starts child workflows (a child step, a workflow map), the workflow it starts and
 * the version it pins (`number` when it starts the newest registered).
 */
export interface ChildStep<
  Id extends string = string,
  Name extends string = string,
  Version extends number = number,
> {
  step: Id;
  workflow: Name;
  version?: Version;
}

/**
 * A definition built by the typed builder: the same JSON as {@link WorkflowDefinition}, plus its
 * types as a phantom property that never exists at runtime and never reaches the JSON.
 */
export interface TypedDefinition<T extends DefinitionTypes = DefinitionTypes> extends WorkflowDefinition {
  readonly [typesKey]?: T;
}

type TypesOf<D> = D extends { readonly [typesKey]?: infer T }
  ? T extends DefinitionTypes
    ? T
    : never
  : never;
type Or<T, Fallback> = [T] extends [never] ? Fallback : T;

/** The workflow name of a typed definition (`string` for an untyped one). */
export type NameOf<D> = Or<TypesOf<D>['name'], string>;
/**
 * The version of a definition as the types see it: the typed builder's literal (`2`), else a
 * literal `version` property (an `as const` definition), else `number`.
 */
export type VersionOf<D> = [TypesOf<D>] extends [never]
  ? D extends { readonly version: infer V extends number }
    ? V
    : number
  : TypesOf<D> extends { version: infer V extends number }
    ? V
    : number;
/** The declared workflow input of a definition (`unknown` when untyped). */
export type InputOf<D> = Or<TypesOf<D>['input'], unknown>;
/** The declared workflow output of a definition (`unknown` when untyped). */
export type OutputOf<D> = Or<TypesOf<D>['output'], unknown>;
/** Step outputs by step id, as stored (JSON round-tripped). */
export type StepOutputsOf<D> = Or<TypesOf<D>['outputs'], Record<string, unknown>>;
/** Signal payloads by name (any name and payload when untyped). */
export type SignalsOf<D> = Or<TypesOf<D>['signals'], Record<string, unknown>>;
/** The step ids of a typed definition (`string` for an untyped one). */
export type StepIdOf<D> = Or<TypesOf<D>['steps'], string>;
/** The names of the workflows a typed definition's child and map steps start (`never` when untyped). */
export type ChildrenOf<D> = TypesOf<D> extends { children: infer C extends string } ? C : never;
/** The step kinds beyond the core a typed definition uses (`never` when untyped or none). */
export type KindsOf<D> = [TypesOf<D>] extends [never]
  ? never
  : TypesOf<D> extends { kinds: infer K extends string }
    ? K
    : never;
/**
 * The child and map steps that start workflows, each with its workflow's name: any step id and
 * name for an untyped definition.
 */
export type ChildStepsOf<D> = [TypesOf<D>] extends [never]
  ? ChildStep
  : TypesOf<D> extends { childSteps: infer C extends ChildStep }
    ? C
    : ChildStep<StepIdOf<D>>;
/**
 * The step ids of a typed definition whose tasks report results (task steps, handler maps), which
 * a harness completes and fails: any string for an untyped definition.
 */
export type TaskStepIdOf<D> = keyof TaskOutputsOf<D> & string;
/**
 * What a task of each step that runs tasks reports, by step id, as stored: a map step's is one
 * item's result. Any step id and output for an untyped definition.
 */
export type TaskOutputsOf<D> = [TypesOf<D>] extends [never]
  ? Record<string, unknown>
  : TypesOf<D> extends { tasks: infer T extends object }
    ? T
    : StepOutputsOf<D>;
/** What each handler a definition names must take and return. */
export type HandlerSpecsOf<D> = Or<TypesOf<D>['handlers'], Record<string, HandlerSpec>>;
