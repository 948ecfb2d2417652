// What a handler author writes against: the context a handler receives, the handler itself, and
// the handler map a set of definitions asks for (checked by the compiler for typed definitions).

import type { DefinitionInput, WorkflowDefinition } from '../definition/schema.js';
import type {
  ChildrenOf,
  ChildStepsOf,
  HandlerSpecsOf,
  KindsOf,
  NameOf,
  VersionOf,
} from '../definition/typed-definition.js';
import type { UnionToIntersection } from '../definition/typing.js';
import type { SearchValue } from '../search.js';
import type { ScheduledFor } from '../snapshot.js';
import type { CallbackOptions } from './callback-port.js';
import type { HandlerStream } from './task-stream.js';

/** What a handler receives. */
export interface HandlerContext<I = unknown> {
  /** The step's mapped input (or the workflow input). */
  input: I;
  /** The instance's workflow input. */
  workflowInput: unknown;
  /** Outputs of completed steps, by step id. */
  outputs: Record<string, unknown>;
  instanceId: string;
  step: string;
  /** `compensate` when undoing the step. */
  phase: 'run' | 'compensate';
  /** 1 for the first try; grows with retries and re-dispatches. */
  attempt: number;
  /** Stable across attempts of one step execution: use it to make side effects idempotent. */
  idempotencyKey: string;
  /** How many times the step has been entered in this run (loops count up; a new run restarts at 1). */
  iteration: number;
  /** Fires on cancel, abort or when the attempt's deadline passes. */
  signal: AbortSignal;
  /**
   * Says the handler is alive, with optional `details` (JSON of at most 2 KiB: progress, a
   * cursor), which the next attempt of this execution reads as `heartbeatDetails` if this one is
   * lost or fails. For a task with `heartbeatMs` the attempt's lease follows these calls: call it
   * at least that often, or the attempt is lost (`HEARTBEAT_TIMEOUT`) and retried. Writes are
   * batched (at most one per third of the lease, the latest details winning), so call it freely.
   * Throws `HEARTBEAT_TOO_LARGE` for details over the size, `INVALID_INPUT` for what JSON cannot hold.
   * Needs the runner's `heartbeats` option (`handlerHeartbeats`; `INVALID_OPTIONS` otherwise).
   */
  heartbeat(details?: unknown): void;
  /**
   * The details of the latest heartbeat an earlier attempt of this step execution sent (as
   * Temporal's `heartbeatDetails`): where a retry resumes. Undefined on a first attempt, when none
   * sent details, and for a map's items (only a task step keeps them).
   */
  heartbeatDetails?: unknown;
  /**
   * For a run a schedule started: the schedule's `id`, the `slot` it is for (epoch ms; a
   * trigger-now's is the time it was triggered) and `how` it was started. Undefined otherwise.
   */
  schedule?: ScheduledFor | undefined;
  /**
   * A callback token for the step listening for `signal` (this instance, that step's waiting
   * visit, expiring): put it in a link or give it to a third party; `runner.callback(token, data)`
   * applies the signal once. Needs the runner's `callbacks` option (`INVALID_OPTIONS` otherwise).
   */
  callback(signal: string, options?: CallbackOptions): Promise<string>;
  /**
   * Sets search attributes the workflow declares without `from` (`null` clears one): written with
   * the attempt's result when it completes (a failed attempt's are dropped), then indexed by the
   * store (the runner runs such a workflow with `kinds: [searchAttributes]`). Throws
   * `INVALID_SEARCH_ATTRIBUTE` for a name not declared so, or a value of another type.
   */
  setAttributes(values: Readonly<Record<string, SearchValue | null>>): void;
  /**
   * The instance's stream, for this attempt's chunks (model tokens, progress): readers resume it by
   * offset (`store.stream`). Flushed before the attempt's result is written.
   */
  stream: HandlerStream;
}

/** A task handler: returns the step's output (stored as JSON) or throws to fail the attempt. */
export type Handler<I = unknown, O = unknown> = (ctx: HandlerContext<I>) => O | Promise<O>;

/** Any definition a runner accepts: typed (from the builder), validated, or plain JSON. */
export type AnyDefinition = DefinitionInput | WorkflowDefinition;

// biome-ignore lint/suspicious/noExplicitAny: an untyped definition's handlers may declare any input type.
type UntypedHandler = Handler<any, unknown>;
// Per definition (distributed), so a JSON definition among typed ones adds its open record instead of vanishing.
type SpecsEach<D> = D extends unknown ? HandlerSpecsOf<D> : never;
/**
 * Every handler spec the workflows `W` name, merged into one record by handler name: what each
 * handler takes and returns (any name, input and output once one of them is untyped).
 */
export type HandlerSpecsFor<W extends readonly AnyDefinition[]> = UnionToIntersection<SpecsEach<W[number]>>;
type NeededSpecs<W extends readonly AnyDefinition[]> = HandlerSpecsFor<W>;

/**
 * The handler map a runner of these workflows needs: one handler per name the definitions use,
 * each taking the input its step maps and returning what its definition declared. Untyped
 * definitions ask only for functions.
 */
export type HandlersFor<W extends readonly AnyDefinition[]> = {
  [K in keyof NeededSpecs<W>]: NeededSpecs<W>[K] extends { input: infer I; output: infer O }
    ? unknown extends I
      ? UntypedHandler
      : Handler<I, O>
    : UntypedHandler;
};

/**
 * Each handler the workflows name and `H` lacks, as a message the compiler shows first: `Property
 * 'charge' is missing ... required in type '{ charge: "missing handler"; }'` (untyped: none).
 */
export type MissingHandlers<H, Need> = string extends keyof Need
  ? unknown
  : { [K in Exclude<keyof Need, keyof H>]: 'missing handler' };

/** Handlers no workflow of the runner names must be a message, so passing one does not compile and says why. */
export type NoExtraHandlers<H, Need> = string extends keyof Need
  ? unknown
  : { [K in Exclude<keyof H, keyof Need>]: 'no workflow of this runner names this handler' };

/**
 * What a runner's handler table `H` must also be: every handler the workflows need (`Need`), and,
 * with `strictHandlers: true` (`Strict`), nothing else. Without it a table may hold handlers of
 * other workflows, so one table serves an API runner and a worker that register different
 * workflows; a misspelt name still leaves the right one missing, which is reported.
 */
export type HandlerTableCheck<H, Need, Strict> = MissingHandlers<H, Need> &
  (Strict extends true ? NoExtraHandlers<H, Need> : unknown);

// Per definition (distributed), so a JSON definition among typed ones makes the names `string`.
type NamesEach<D> = D extends unknown ? NameOf<D> : never;
type ChildrenEach<D> = D extends unknown ? ChildrenOf<D> : never;
/** The child workflows the typed definitions `W` start that are not among `W`. */
type MissingChildren<W extends readonly AnyDefinition[]> = Exclude<
  ChildrenEach<W[number]>,
  NamesEach<W[number]>
>;

type ChildStepsEach<D> = D extends unknown ? ChildStepsOf<D> : never;
// Per definition (distributed): whether one of `W` is `Name` at version `Ver` (or at a version the types do not see).
type RegistersVersion<W extends readonly AnyDefinition[], Name, Ver> = W[number] extends infer D
  ? D extends unknown
    ? Name extends NameOf<D>
      ? number extends VersionOf<D>
        ? true
        : Ver extends VersionOf<D>
          ? true
          : never
      : never
    : never
  : never;
/** `name vN` of each version a child or map step of `W` pins that `W` does not register (its name being registered). */
type MissingVersions<W extends readonly AnyDefinition[]> =
  ChildStepsEach<W[number]> extends infer C
    ? C extends { workflow: infer Name extends string; version?: infer Ver extends number }
      ? number extends Ver
        ? never
        : Name extends NamesEach<W[number]>
          ? [RegistersVersion<W, Name, Ver>] extends [never]
            ? `${Name} v${Ver}`
            : never
          : never
      : never
    : never;

/**
 * Nothing when every workflow a child or map step of `W` starts is among `W`, at the version it
 * pins (or a name or version is not known: a JSON definition, a name given as a plain string, a
 * version held in a `number`); else a message naming them.
 */
export type ChildWorkflowsCheck<W extends readonly AnyDefinition[]> = string extends
  | NamesEach<W[number]>
  | ChildrenEach<W[number]>
  ? unknown
  : [MissingChildren<W>] extends [never]
    ? [MissingVersions<W>] extends [never]
      ? unknown
      : {
          store: `${MissingVersions<W>}: a child or map step pins this version, so register it in workflows too`;
        }
    : // On `store` (always given, and short to print): on `workflows`, the tuple's dump hid the message.
      { store: `${MissingChildren<W>}: a child or map step starts it, so register it in workflows too` };

type KindsEach<D> = D extends unknown ? KindsOf<D> : never;
/**
 * What a list of kind sets brings: the step kinds (the keys of their rules), `'limits'` for flow
 * limits and `'search'` for search attributes.
 */
type KindsIn<KS> = KS extends readonly (infer S)[]
  ? S extends { readonly rules: infer R }
    ?
        | keyof R
        | (S extends { readonly limits: object } ? 'limits' : never)
        | (S extends { readonly search: object } ? 'search' : never)
    : never
  : never;
/** The message for what is missing among composition's kinds and flow control. */
type StepKindsMessage<Missing> = [Exclude<Missing, 'limits'>] extends [never]
  ? "flow control (concurrency, rateLimit, priority, fairness) runs only with kinds: [flowControl] from '@stepfold/engine'"
  : [Extract<Missing, 'limits'>] extends [never]
    ? "child and map steps run only with kinds: [composition] from '@stepfold/engine'"
    : "child and map steps and flow control run only with kinds: [composition, flowControl] from '@stepfold/engine'";
type SearchMessage = "search attributes run only with kinds: [searchAttributes] from '@stepfold/engine'";
/** The one-line message for what is missing from `kinds`: composition's kinds, flow control, search attributes. */
type KindsMessage<Missing> = [Extract<Missing, 'search'>] extends [never]
  ? StepKindsMessage<Missing>
  : [Exclude<Missing, 'search'>] extends [never]
    ? SearchMessage
    : `${StepKindsMessage<Exclude<Missing, 'search'>>}; ${SearchMessage}`;

/**
 * Nothing when `kinds` brings every step kind the typed definitions `W` use (and flow limits or
 * search attributes when they declare any); else a one-line message on `kinds` saying what to pass.
 */
export type KindsCheck<W extends readonly AnyDefinition[], KS> = [
  Exclude<KindsEach<W[number]>, KindsIn<KS>>,
] extends [never]
  ? unknown
  : { kinds: KindsMessage<Exclude<KindsEach<W[number]>, KindsIn<KS>>> };
