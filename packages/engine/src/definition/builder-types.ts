// Type-level helpers of the typed builder (`builder.ts`): field shapes and the checks that turn
// a mistake into a compile error with a message. Types only.
import type { SearchType } from '../search.js';
import type { StepDefinition, StepOf } from './schema.js';
import type { HandlerSpec, HumanDecision } from './typed-definition.js';
import type { DataPath, Jsonify, PathValue, Resolve, StandardSchema, StepData } from './typing.js';

/** A step kind's fields as the builder takes them (no `kind`, `id`; `end` to stop linking). */
export type Fields<K extends StepDefinition['kind']> = Omit<StepOf<K>, 'kind' | 'id'> & {
  /** Do not link this step to the one added after it (an end of a path or branch). */
  end?: boolean | undefined;
};

/** Handler specs by name. */
export type Handlers = Record<string, HandlerSpec>;
/** Names a field may use: any string until the matching declaration (`handlers`, `signal`) made them a union. */
export type NameIn<T, Strict extends boolean> = Strict extends true ? keyof T & string : string;
/** Handler names a step may use: any string until `handlers<...>()` declared them. */
export type HandlerName<H> = keyof H extends never ? string : keyof H & string;
/** A data mapping: a path, or an object of paths, over the input `WI` and earlier outputs `O`. */
export type Mapping<WI, O> = DataPath<WI, O> | { readonly [key: string]: DataPath<WI, O> };
/** What a mapping `M` produces (the workflow input when there is none). */
export type Mapped<WI, O, M> = [M] extends [undefined] ? WI : Resolve<StepData<WI, O>, M>;
/** A handler implementation's input and output types. */
export type SpecOf<F> = F extends (ctx: infer C) => infer R
  ? { input: C extends { input: infer I } ? I : unknown; output: Awaited<R> }
  : never;
/** A task's output as stored (JSON): its declared schema's, else its handler's. */
export type TaskOutput<H, K, Out> = [Out] extends [never]
  ? K extends keyof H
    ? H[K] extends HandlerSpec
      ? Jsonify<H[K]['output']>
      : unknown
    : unknown
  : Jsonify<Out>;
/** A task's output as its handler returns it (before JSON). */
export type RawOutput<H, K, Out> = [Out] extends [never]
  ? K extends keyof H
    ? H[K] extends HandlerSpec
      ? H[K]['output']
      : unknown
    : unknown
  : Out;
/** A signal's payload as stored (any when the signal is undeclared). */
export type Payload<S, Sig> = Sig extends keyof S ? Jsonify<S[Sig]> : unknown;
/**
 * Whether a mapping `M` did not match its constraint (a typo in a path): `M` is then the whole
 * constraint, `undefined` included. The checks of what it maps stand aside, so the compiler's
 * "Did you mean" about the path is the error shown.
 */
export type Unmatched<M> = [M] extends [undefined] ? false : undefined extends M ? true : false;
/** Nothing when a task's input fits its handler; else an object naming what does not fit. */
export type TaskCheck<In, H, K, M> = Unmatched<M> extends true ? unknown : TaskInputCheck<In, H, K, M>;
type TaskInputCheck<In, H, K, M> = K extends keyof H
  ? H[K] extends HandlerSpec
    ? [In] extends [H[K]['input']]
      ? unknown
      : [M] extends [undefined]
        ? {
            handler: {
              error: 'the workflow input does not fit this handler: add an input mapping';
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
  : unknown;
/** The fields every linking step has. */
export type Linked = { next?: string; end?: boolean; description?: string };
/** A new step id, or (for one already used) a message the compiler shows in its place. */
export type NewId<Id extends string, Ids extends string> = Id extends Ids ? `duplicate step id "${Id}"` : Id;
/** Nothing when `Out` fits the declared workflow output `WO` (or none is declared); else what is wrong. */
export type OutputCheck<Out, WO> = unknown extends WO
  ? unknown
  : [Out] extends [WO]
    ? unknown
    : { output: { error: 'the workflow output does not match .output()'; got: Out; want: WO } };
/**
 * What a `succeed` step's fields must also fit: its mapped output `Out` (undefined without a
 * mapping) must fit the declared output `WO`; without a mapping, once a parallel step forked
 * (`Forked`), it may end a branch, which gives the workflow no output, so it is not checked.
 */
export type SucceedCheck<Out, WO, Forked extends boolean> = [Out] extends [undefined]
  ? Forked extends true
    ? unknown
    : unknown extends WO
      ? unknown
      : [undefined] extends [WO]
        ? unknown
        : { 'a succeed before any parallel step ends the workflow: map an output that fits .output()': WO }
  : OutputCheck<Out, WO>;
/**
 * A human step's output: the payload type `.signal(name, schema)` declared for its signal, else
 * any decision.
 */
export type DecisionOutput<S, Sig> = Sig extends keyof S ? Jsonify<S[Sig]> : HumanDecision;
/**
 * What `build()` takes as `this`: any builder, unless the last step's output (what a workflow
 * ending there ends with) does not fit the declared `.output()`; then a message no builder is, so
 * the compiler's first line says it (with what the step gives and what `.output()` wants).
 */
export type BuildCheck<Last, WO> = unknown extends WO
  ? unknown
  : [Last] extends [WO]
    ? unknown
    : "the last step's output does not match the declared .output()" & { got: Last; want: WO };

/** What a flow limit's key path may lead to: a string, a number or a boolean. */
export type KeyValue = string | number | boolean;
/**
 * The paths among `P` whose value in the data `D` is a {@link KeyValue} (or is not known: an
 * undeclared input or output): what a flow limit's `key` may be.
 */
export type KeyPaths<D, P> = P extends string
  ? unknown extends PathValue<D, P>
    ? P
    : [PathValue<D, P>] extends [KeyValue]
      ? P
      : never
  : never;
/** A flow limit's key paths over the workflow input `WI` and earlier outputs `O`. */
export type KeyPath<WI, O> = KeyPaths<StepData<WI, O>, DataPath<WI, O>>;

/** The values a search attribute of type `T` holds: `time` is epoch ms. */
type SearchTypeValue<T extends SearchType> = T extends 'string'
  ? string
  : T extends 'boolean'
    ? boolean
    : number;
/**
 * The paths among `P` whose value in `D` fits a search attribute of type `T` (or is not known: an
 * undeclared input or output); `null` or absent there leaves the attribute without a value.
 */
export type SearchPaths<D, P, T extends SearchType> = P extends string
  ? unknown extends PathValue<D, P>
    ? P
    : [NonNullable<PathValue<D, P>>] extends [SearchTypeValue<T>]
      ? P
      : never
  : never;
/** What a search attribute may be read from: the input and the outputs of steps added before. */
export type SearchPath<WI, O, T extends SearchType> = SearchPaths<StepData<WI, O>, DataPath<WI, O>, T>;

/** `N` when it is a positive integer (`number` when not known here or not inferred); else a message naming `Name`. */
export type PositiveInt<N extends number, Name extends string = 'limit'> = [N] extends [never]
  ? number
  : number extends N
    ? N
    : `${N}` extends `-${string}` | '0' | `${string}.${string}` | `${string}e-${string}`
      ? `${Name} must be a positive integer`
      : N;
type Chars<S extends string> = S extends `${infer H}${infer R}` ? [H, ...Chars<R>] : [];
type Blank<T extends unknown[]> = { [K in keyof T]: unknown };
/** Whether the digit strings `A` and `B`, of one length, have `A` first in order. */
type DigitsBelow<A extends string, B extends string> = A extends `${infer a}${infer ra}`
  ? B extends `${infer b}${infer rb}`
    ? a extends b
      ? DigitsBelow<ra, rb>
      : '0123456789' extends `${string}${a}${string}${b}${string}`
        ? true
        : false
    : false
  : false;
/** Whether the positive integer literal `A` is below `B` (by their digits, as the compiler sees them). */
export type IntBelow<A extends number, B extends number> =
  Blank<Chars<`${B}`>> extends [...Blank<Chars<`${A}`>>, unknown, ...unknown[]]
    ? true
    : Blank<Chars<`${A}`>> extends Blank<Chars<`${B}`>>
      ? DigitsBelow<`${A}`, `${B}`>
      : false;
/**
 * A task's `heartbeatMs`: a positive integer, and below a literal `timeoutMs` (`T`, `never` when
 * the step sets none: the workflow's default is checked when the definition is built).
 */
export type HeartbeatMs<N extends number, T extends number> = [N] extends [never]
  ? number
  : number extends N
    ? N
    : `${N}` extends `-${string}` | '0' | `${string}.${string}` | `${string}e-${string}`
      ? 'heartbeatMs must be a positive integer'
      : [T] extends [never]
        ? N
        : number extends T
          ? N
          : IntBelow<N, T> extends true
            ? N
            : 'heartbeatMs must be below timeoutMs';

/** A concurrency limit in the typed builder: `key` is a path to a key value; a literal `limit` is checked. */
export interface TypedFlowLimit<P, N extends number = number> {
  /** A data path whose value (a string, number or boolean) names the counter; none: one counter. */
  key?: P | undefined;
  /** At most this many at once: a positive integer. */
  limit: PositiveInt<N>;
  /** The counter's name, shared by every step (or workflow) naming it (default: workflow/step). */
  scope?: string | undefined;
}
/** A rate limit in the typed builder: at most `limit` starts per key in any window of `periodMs`. */
export interface TypedRateLimit<P, N extends number = number, Ms extends number = number> {
  /** A data path whose value (a string, number or boolean) names the window; none: one window. */
  key?: P | undefined;
  /** At most this many starts per window: a positive integer. */
  limit: PositiveInt<N>;
  /** The sliding window, in ms: a positive integer. */
  periodMs: PositiveInt<Ms, 'periodMs'>;
  /** The window's name, shared by every step naming it (default: workflow/step). */
  scope?: string | undefined;
}
/**
 * A step's flow limits in the typed builder: one limit (a literal `limit` and `periodMs` checked
 * by the compiler) or a list of them (their keys checked).
 */
export type FlowFields<
  P,
  N extends number,
  RN extends number,
  Ms extends number,
  LN extends number = number,
  LRN extends number = number,
> = {
  /** At most `limit` attempts at once per key value, across every runner sharing the store. */
  concurrency?: TypedFlowLimit<P, N> | LimitList<TypedFlowLimit<P, LN>> | undefined;
  /** At most `limit` attempt starts per key value in any window of `periodMs`. */
  rateLimit?: TypedRateLimit<P, RN, Ms> | LimitList<TypedRateLimit<P, LRN>> | undefined;
};
/**
 * `'limits'` when a step writes a flow limit, told by the limits' inferred types (each `never`
 * when its field is absent): what `createRunner` then asks for in `kinds` (`flowControl`).
 */
export type LimitsOf<N> = [N] extends [never] ? never : 'limits';
/**
 * A list of limits. The fields a single limit has are `never` here, so the compiler checks a
 * single limit's fields one by one and its first line names the one that is wrong.
 */
export type LimitList<T> = readonly T[] & {
  key?: never;
  limit?: never;
  periodMs?: never;
  scope?: never;
};

/** The fields of a typed task step; `input` paths and `handler` names are checked by the compiler. */
export type TaskFields<
  K extends string,
  M,
  C extends string | undefined,
  Out,
  P = string,
  N extends number = number,
  RN extends number = number,
  Ms extends number = number,
  LN extends number = number,
  LRN extends number = number,
  HB extends number = number,
  TO extends number = number,
> = Linked & {
  /** Handler to call (a key of `handlers<...>()` when declared). */
  handler: K;
  /** Where the handler's input comes from (default: the workflow input). */
  input?: M | undefined;
  /** Handler that undoes the step once it completed. */
  compensate?: C | undefined;
  /** Schema of the handler's output: checked when the handler returns, and the type later steps read. */
  output?: StandardSchema<unknown, Out> | undefined;
  /** How long an attempt may run before it is lost (ms; default the workflow's, else 5 minutes). */
  timeoutMs?: TO | undefined;
  /**
   * The handler calls `ctx.heartbeat()` at least this often (ms): silent this long, its attempt
   * is lost (`HEARTBEAT_TIMEOUT`) and retried. A positive integer below `timeoutMs`.
   */
  heartbeatMs?: HeartbeatMs<HB, TO> | undefined;
} & FlowFields<P, N, RN, Ms, LN, LRN> &
  Omit<
    Fields<'task'>,
    | 'handler'
    | 'input'
    | 'compensate'
    | 'next'
    | 'end'
    | 'description'
    | 'concurrency'
    | 'rateLimit'
    | 'timeoutMs'
    | 'heartbeatMs'
  >;

/** What `ms` and `until` are typed as beside each other: a sleep takes exactly one. */
type SleepConflict = 'a sleep takes ms or until, not both';
/** A sleep's timing: `ms` from entry, or `until` a path to an epoch-ms value; exactly one. */
export type SleepTiming<P> =
  | { ms: number; until?: SleepConflict | undefined }
  | { until: P; ms?: SleepConflict | undefined };

/** The bounds of a collect step. */
export type CollectBound = 'maxItems' | 'idleMs' | 'maxWaitMs' | 'drain';
type Bounds = {
  maxItems?: number | undefined;
  idleMs?: number | undefined;
  maxWaitMs?: number | undefined;
  drain?: undefined;
};
/** A collect step's bounds: at least one of `maxItems`, `idleMs` and `maxWaitMs`, or `drain` (with `maxItems` at most). */
export type CollectBounds =
  | (Bounds & { maxItems: number })
  | (Bounds & { idleMs: number })
  | (Bounds & { maxWaitMs: number })
  | { drain: true; maxItems?: number | undefined; idleMs?: undefined; maxWaitMs?: undefined };
