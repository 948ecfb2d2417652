// Type-level helpers of the typed builder's `child` and `map` steps: their fields, what their
// outputs and item inputs are, and the checks that turn a mistake into a compile error. Types only.
import type {
  Fields,
  FlowFields,
  Handlers,
  KeyPaths,
  Linked,
  RawOutput,
  TaskOutput,
  Unmatched,
} from './builder-types.js';
import type { DefinitionInput, WorkflowDefinition } from './schema.js';
import type { ChildStep, HandlerSpec, InputOf, NameOf, OutputOf } from './typed-definition.js';
import type { DataPath, Jsonify, PathsUnder, PathValue, Resolve, StepData } from './typing.js';

/** What a child or map step may start: a definition (its name goes to the JSON), or a workflow name (untyped). */
export type ChildWorkflow = DefinitionInput | WorkflowDefinition | string;

/** The summary a map step ends with when it does not collect results (`results: 'discard'`). */
export interface MapSummary {
  /** How many items the array had. */
  total: number;
  /** How many items completed. */
  completed: number;
  /** The indexes of the items that failed (within the tolerance). */
  failed: number[];
}

/** A workflow map's summary: `children` plus an item's index is that item's child instance id. */
export interface WorkflowMapSummary extends MapSummary {
  /** The prefix of the children's ids. */
  children: string;
}

/** The name a child workflow is registered under (`string` when not known). */
export type ChildName<W> = W extends string ? W : NameOf<W>;
/**
 * What a `child` or `map` step `Id` records of the workflow it starts (and the version `Ver` it
 * pins, if any): nothing for a map of handlers.
 */
export type ChildStepOf<Id extends string, W, Ver = undefined> = [W] extends [undefined]
  ? never
  : ChildStep<Id, ChildName<Exclude<W, undefined>>, Ver extends number ? Ver : number>;
/** A child workflow's declared output, as stored (JSON); `unknown` for an untyped one. */
export type ChildOutput<W> = W extends string ? unknown : Jsonify<OutputOf<W>>;
/** A child workflow's declared input; `unknown` for an untyped one. */
export type ChildInput<W> = W extends string ? unknown : InputOf<W>;

/**
 * Nothing when the input `In` fits the child workflow's input; else a mismatch on `input` (mapped)
 * or, with no mapping to point at, on the step id.
 */
export type ChildCheck<In, W, M> = [In] extends [ChildInput<W>]
  ? { id: unknown; fields: unknown }
  : Unmatched<M> extends true
    ? { id: unknown; fields: unknown }
    : [M] extends [undefined]
      ? {
          id: {
            error: 'the workflow input does not fit the child workflow input: add an input mapping';
            got: In;
            want: ChildInput<W>;
          };
          fields: unknown;
        }
      : {
          id: unknown;
          fields: {
            input: {
              error: 'the mapped input does not match the child workflow input';
              got: In;
              want: ChildInput<W>;
            };
          };
        };

/** The handler a `compensate` field names, as the runner must provide it. */
export type CompensateSpec<C, In> = { [P in C & string]: { input: In; output: unknown } };

/** The fields of a typed child step; `workflow` is the child definition, `input` is checked against its input. */
export type ChildFields<W, M, C, WI, O> = Linked & {
  /** The workflow to start: its definition (typed from the builder for checked types), or its name. */
  workflow: W;
  /** The child's input (default: the workflow input). */
  input?: M | undefined;
  /** Where the child's instance id comes from (default `parent/run/step/iteration`). */
  childId?: DataPath<WI, O> | undefined;
  /** Handler that undoes the step instead of reverting the child. */
  compensate?: C | undefined;
} & Omit<Fields<'child'>, 'workflow' | 'input' | 'childId' | 'compensate' | 'next' | 'end' | 'description'>;

/** The element type of the array at path `P` of the data `D` (`unknown` when not known). */
export type ItemOf<D, P extends string> =
  NonNullable<PathValue<D, P>> extends readonly (infer E)[] ? E : unknown;
/** Whether the path `P` leads to an array (or to data of unknown type). */
export type IsArrayPath<D, P extends string> =
  unknown extends PathValue<D, P>
    ? true
    : NonNullable<PathValue<D, P>> extends readonly unknown[]
      ? true
      : false;
// Distributed: a typo leaves `P` at its constraint (every path), and then these are the ones to offer.
type ArrayPaths<D, P extends string> = P extends unknown
  ? IsArrayPath<D, P> extends true
    ? P
    : never
  : never;
/**
 * The path `P` when it leads to an array (or to data of unknown type); else a message naming it. A
 * path that is none of the data's leaves the paths to arrays, so the compiler suggests one.
 */
export type ItemsPath<D, P extends string> = [ArrayPaths<D, P>] extends [never]
  ? `${P} is not a path to an array`
  : ArrayPaths<D, P>;

/** What a map item's input mapping reads: the workflow's data, the item and its index. */
export interface ItemData<WI, O, E> extends StepData<WI, O> {
  item: E;
  index: number;
}
/** A path a map item's input mapping may use. */
export type ItemPath<WI, O, E> = DataPath<WI, O> | PathsUnder<E, 'item'> | 'index';
/** A map item's input mapping: a path, or an object of paths. */
export type ItemMapping<WI, O, E> = ItemPath<WI, O, E> | { readonly [key: string]: ItemPath<WI, O, E> };
/** What each item's task (or child) gets: the item, or what the mapping produces from it. */
export type ItemInput<WI, O, E, M> = [M] extends [undefined] ? E : Resolve<ItemData<WI, O, E>, M>;

/** A map's flow limit key paths: paths of the data, the item and its index that lead to a key value. */
export type ItemKeyPath<WI, O, E> = KeyPaths<ItemData<WI, O, E>, ItemPath<WI, O, E>>;

/** The fields of a typed map step; `items` must lead to an array, each item's input fits its handler or workflow. */
export type MapFields<
  P,
  K,
  W,
  M,
  C,
  R,
  KP = string,
  N extends number = number,
  RN extends number = number,
  LN extends number = number,
  LRN extends number = number,
> = Linked & {
  /** The array to map over: a data path. */
  items: P;
  /** The handler each item runs (or `workflow`). */
  handler?: K | undefined;
  /** The workflow each item starts (or `handler`): its definition (typed from the builder), or its name. */
  workflow?: W | undefined;
  /** Each item's input: paths from `item`, `index`, `input` or `outputs` (default: the item). */
  input?: M | undefined;
  /** Handler that undoes a completed item (for a workflow map: instead of reverting its child). */
  compensate?: C | undefined;
  /** `collect`: the output is the results in item order; `discard`: a summary (default: collect for handlers). */
  results?: R | undefined;
} & FlowFields<KP, N, RN, number, LN, LRN> &
  Omit<
    Fields<'map'>,
    | 'items'
    | 'handler'
    | 'workflow'
    | 'input'
    | 'compensate'
    | 'results'
    | 'next'
    | 'end'
    | 'description'
    | 'concurrency'
    | 'rateLimit'
  >;

/**
 * Nothing when the map has one of `handler` and `workflow` and each item's input fits it; else a
 * message on the field at fault (`items` for an item that needs a mapping to fit a child workflow).
 */
export type MapCheck<In, H, K, W, M, ItemsOk> = ItemsOk extends false
  ? unknown
  : Unmatched<M> extends true
    ? unknown
    : [K] extends [undefined]
      ? [W] extends [undefined]
        ? { items: { error: 'a map needs a handler or a workflow' } }
        : [In] extends [ChildInput<W>]
          ? unknown
          : [M] extends [undefined]
            ? {
                items: {
                  error: 'the item does not fit the child workflow input: add an input mapping';
                  got: In;
                  want: ChildInput<W>;
                };
              }
            : {
                input: {
                  error: 'the mapped input does not match the child workflow input';
                  got: In;
                  want: ChildInput<W>;
                };
              }
      : [W] extends [undefined]
        ? K extends keyof H
          ? H[K] extends HandlerSpec
            ? [In] extends [H[K]['input']]
              ? unknown
              : [M] extends [undefined]
                ? {
                    handler: {
                      error: 'the item does not fit this handler: add an input mapping';
                      got: In;
                      want: H[K]['input'];
                    };
                  }
                : {
                    input: {
                      error: 'the mapped input does not match the handler input';
                      got: In;
                      want: H[K]['input'];
                    };
                  }
            : unknown
          : unknown
        : { handler: { error: 'a map takes a handler or a workflow, not both' } };

/** A map step's output: the results in item order (null for failed items), or its summary. */
export type MapOutput<H extends Handlers, K, W, R> = [W] extends [undefined]
  ? [R] extends ['discard']
    ? MapSummary
    : Array<TaskOutput<H, K, never> | null>
  : [R] extends ['collect']
    ? Array<ChildOutput<W> | null>
    : WorkflowMapSummary;

/**
 * A map step among the steps that report task results: a handler map, with one item's result (its
 * handler's output, as stored); a workflow map's items are reported by their children's ends.
 */
export type MapTasks<Id extends string, H extends Handlers, K, W> = [W] extends [undefined]
  ? { [Q in Id]: TaskOutput<H, K, never> }
  : unknown;

/** What the runner must provide for a map step: its handler (given each item's input) and its compensation. */
export type MapSpecs<H extends Handlers, K, C, In> = {
  [P in K & string]: { input: In; output: RawOutput<H, K, never> };
} & CompensateSpec<C, In>;
