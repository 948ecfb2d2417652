import type { CallbackPort } from './callback-port.js';
import type { RunnerKindSet } from './child-port.js';
// What a runner's user works with: its options, the messages it handles and what they answer,
// the typed clients and snapshots, and the Runner itself. What handler authors write against is in
// handler-types.ts; what only a worker reaches is in port.ts.

import type {
  InputOf,
  NameOf,
  OutputOf,
  SignalsOf,
  StepIdOf,
  StepOutputsOf,
  VersionOf,
} from '../definition/typed-definition.js';
import type { FinishedStatus, LogEntry, ScheduledFor, Snapshot, StepState } from '../snapshot.js';
import type { Store } from '../store/store.js';
import type { RunnerCodec } from './codec-port.js';
import type { RunnerHeartbeats } from './handler-heartbeats.js';
import type { AnyDefinition, HandlersFor } from './handler-types.js';
import type { DefinedHooks } from './hooks.js';
import type { RunnerPayloads } from './payload-port.js';
import type { PublishedEvent, PublishResult } from './publish-port.js';
import type { RunnerInstrumentation } from './traced.js';

/**
 * Options of {@link createRunner}. A runner that executes (the default) takes one handler per
 * handler name; one with `execute: false` only writes and hands tasks off, and needs none.
 */
export type RunnerOptions<W extends readonly AnyDefinition[] = readonly AnyDefinition[]> =
  RunnerCoreOptions<W> &
    (
      | {
          /** A handler for each handler name the workflows use (checked by the compiler for typed definitions); more are allowed unless `strictHandlers`. */
          handlers: HandlersFor<W>;
          execute?: true | undefined;
        }
      | { handlers?: HandlersFor<W> | undefined; execute: false }
    );

/** The options every runner takes, whether it executes handlers or hands them off. */
export interface RunnerCoreOptions<W extends readonly AnyDefinition[] = readonly AnyDefinition[]> {
  store: Store;
  workflows: W;
  /**
   * `true`: `handlers` must hold exactly the handlers the workflows name: one no workflow of this
   * runner names does not compile (typed definitions) and `createRunner` throws `UNKNOWN_HANDLER`.
   * Default `false`: extra handlers are allowed, so one table serves runners of different workflows.
   */
  strictHandlers?: boolean | undefined;
  /** Observers of what the runner writes, made with `defineHooks(yours)`. */
  hooks?: DefinedHooks | undefined;
  /** Called after every successful write (create or save) with the transitions that write recorded. */
  onWritten?(snapshot: Snapshot, transitions: readonly LogEntry[]): void;
  /** Epoch-ms clock; event times come from here (default `Date.now`). */
  clock?: (() => number) | undefined;
  /** How often a conflicting write is reloaded and re-applied before giving up (default 20). */
  conflictRetries?: number | undefined;
  /**
   * Lease of each attempt this runner starts, ms (default 10 000, at least 100). The runner renews
   * it (a `task.heartbeat` write, one per instance) while the handler runs, once half of it is
   * left; a handler that ends sooner costs no write. An attempt whose lease lapses (its runner's
   * process died) is retried by any worker's due poll (`LEASE_LOST`) within about two leases,
   * whatever its `timeoutMs`. Every runner sharing a store should use the same lease.
   */
  taskLeaseMs?: number | undefined;
  /**
   * `true` (default): run the handlers of the tasks this runner's writes dispatch, in this
   * process. `false`: hand them off — every event is written with its tasks queued, the instance
   * due at once, for a worker (any process's) to take; an API process that only starts and signals.
   * Its calls resolve once their event is written, with the snapshot written (no read back).
   * Such a runner needs no `handlers`.
   */
  execute?: boolean | undefined;
  /**
   * Tracing around-hooks, made with `defineInstrumentation(yours)` or `@stepfold/otel`: a wrapper
   * around every event written and every handler attempt, and the carrier a start stores as
   * `snapshot.trace`. None by default.
   */
  instrument?: RunnerInstrumentation | undefined;
  /**
   * Payload offloading (`offloading({ store })` from `@stepfold/engine`): inputs, outputs
   * and signal payloads over its threshold go to a payload store and the snapshot keeps a reference;
   * handlers and `get` see the values. None by default.
   */
  payloads?: RunnerPayloads | undefined;
  /**
   * Encryption at rest (`aesGcmCodec({ keys })` or `defineCodec(...)` from `@stepfold/engine`):
   * input, step outputs, signal data and offloaded payloads are encoded before the store sees them
   * and decoded on every read; handlers, conditions and `get` see plaintext. None by default.
   */
  codec?: RunnerCodec | undefined;
  /**
   * Step kinds beyond the core, as values: `[composition]` (from `@stepfold/engine`)
   * runs child workflow and map steps. A workflow using a kind no set here brings is refused when
   * the runner is created (`KIND_NOT_LOADED`), and by the compiler for a typed definition.
   */
  kinds?: readonly RunnerKindSet[] | undefined;
  /**
   * Callback tokens (`callbackTokens({ keys })` from `@stepfold/engine`): handlers issue them with
   * `ctx.callback(signal)` and `runner.callback(token, data)` applies them. None by default.
   */
  callbacks?: CallbackPort | undefined;
  /**
   * Handler heartbeats (`handlerHeartbeats` from `@stepfold/engine`): `ctx.heartbeat(details?)`
   * renews the attempt's lease and keeps its details for the next attempt. Without them
   * `ctx.heartbeat` throws `INVALID_OPTIONS`, and the attempt of a step with `heartbeatMs` lapses
   * that long after its handler starts. None by default.
   */
  heartbeats?: RunnerHeartbeats | undefined;
}

/** Options of {@link Runner.get}. */
export interface GetOptions {
  /** With payloads: `false` returns the snapshot as stored, references and all (default `true`). */
  resolve?: boolean | undefined;
}

/** Counters of a runner's writes since it was created. */
export interface RunnerStats {
  /** Successful creates and saves. */
  readonly writes: number;
  /** Writes that lost a race (VERSION_CONFLICT) and were reloaded and re-applied. */
  readonly conflicts: number;
  /**
   * Every race a write lost, re-applied or given up, by what was written: `take` (a task taken
   * from a notice's snapshot), `sent` (sent signals applied), else the event's type (`tick`,
   * `task.completed`, …), `@claim` added when the write started from a claimed snapshot.
   */
  readonly lostRaces: Readonly<Record<string, number>>;
}

/** When a call resolves. */
export interface CallOptions {
  /**
   * `'handlers'` (default): after every handler the call's write dispatched (and those their
   * results dispatched) has reported back. `'write'`: as soon as the event is written; the handlers
   * go on in this runner (`idle()` waits for them), so an HTTP start answers in one write.
   */
  wait?: 'handlers' | 'write' | undefined;
}

/** Options of {@link Runner.start}. */
export interface StartOptions extends CallOptions {
  /** Start this version instead of the newest. */
  version?: number | undefined;
  /** Reuse the id of a finished instance (completed, failed, cancelled or aborted). */
  reuseFinished?: boolean | undefined;
  /**
   * The schedule slot this run is for: kept as `snapshot.schedule`, read by its handlers as
   * `ctx.schedule`. A schedule's fire sets it; set it yourself to run a slot again under another id.
   */
  schedule?: ScheduledFor | undefined;
  /**
   * The run's priority, an integer from 0 to 1000 (higher first), over its workflow's `priority`:
   * work due at once is taken as if it had waited this many seconds longer. Needs `flowControl`;
   * anything else is refused with `INVALID_OPTIONS`, nothing written.
   */
  priority?: number | undefined;
}

/** Options of {@link Runner.signal}. */
export interface SignalOptions extends CallOptions {
  /** Deduplication id: a second signal with the same id is ignored. */
  signalId?: string | undefined;
  /**
   * Apply only while `step` waits (at `iteration` of `run`, when given): else `STEP_NOT_WAITING`
   * and nothing is written. What a callback token's signal is sent with.
   */
  ifWaiting?: { step: string; iteration?: number | undefined; run?: number | undefined } | undefined;
  /** Create and start the instance first if it does not exist (or, with `reuseFinished`, if it has finished). */
  startIfMissing?:
    | { workflow: string; input?: unknown; version?: number; reuseFinished?: boolean; priority?: number }
    | undefined;
}

/** Options of {@link Runner.send}. */
export interface SendOptions {
  /** Deduplication id: a second signal with the same id is ignored (when applied). */
  signalId?: string | undefined;
  /**
   * Throw `INSTANCE_FINISHED` (kind `refused`, HTTP 409) for an instance that has finished,
   * instead of resolving `{ status: 'finished' }`; nothing is written either way.
   */
  rejectFinished?: boolean | undefined;
}

/**
 * What {@link Runner.send} did with the signal, as the write told it (no read is added to learn it):
 * - `queued`: written to the store's inbox; a worker applies it (and drops it then if the instance
 *   finished meanwhile or its `signalId` was seen).
 * - `applied`: applied at once on the signal's own path (a store without an inbox, or an instance
 *   the inbox's write refused), with the snapshot written.
 * - `finished`: the instance has finished (`finished` says how); nothing was written.
 * - `unchanged`: the signal's own path applied it to a live instance without a change (a `signalId`
 *   already seen), with the stored snapshot.
 */
export type SendResult =
  | { status: 'queued' }
  | { status: 'applied' | 'unchanged'; snapshot: Snapshot }
  | { status: 'finished'; finished: FinishedStatus };

/**
 * A message for {@link Runner.handle}: one event for one instance, as a queue or HTTP request
 * carries it. Every runner method is this message handled, so each option of a method is a field here.
 */
export type RunnerMessage =
  | ({ type: 'start'; id: string; workflow: string; input?: unknown } & StartOptions)
  | ({ type: 'signal'; id: string; name: string; payload?: unknown } & SignalOptions)
  | ({ type: 'tick'; id: string; now?: number | undefined } & CallOptions)
  | ({ type: 'cancel' | 'abort'; id: string; reason?: string | undefined } & CallOptions)
  | ({ type: 'requeue'; id: string; step?: string; inputPatch?: Record<string, unknown> } & CallOptions);

/** Result of {@link Runner.handle}: the snapshot after the event (and its tasks), and when to wake it. */
export interface HandleResult {
  snapshot: Snapshot;
  wakeAt: number | null;
  /** Whether the message wrote anything (a duplicate signal, or an event a finished instance ignores, writes nothing). */
  written: boolean;
}

/** The workflow names of these definitions: their literal names, or any string when one is untyped. */
export type WorkflowNameOf<W extends readonly AnyDefinition[]> = W[number] extends infer D
  ? D extends unknown
    ? NameOf<D>
    : never
  : never;

/** The declared input of the workflows among `W` named `N` (`unknown` when one of them is untyped). */
export type InputForName<W extends readonly AnyDefinition[], N> = W[number] extends infer D
  ? D extends unknown
    ? N extends NameOf<D>
      ? InputOf<D>
      : never
    : never
  : never;

/** The versions of the workflows among `W` named `N` (`number` when one of them is not seen as a literal). */
export type VersionForName<W extends readonly AnyDefinition[], N> = W[number] extends infer D
  ? D extends unknown
    ? N extends NameOf<D>
      ? VersionOf<D>
      : never
    : never
  : never;

/** {@link StartOptions} of a runner of `W` for the workflow named `N`: `version` one it registers. */
export type StartOptionsFor<W extends readonly AnyDefinition[], N> = Omit<StartOptions, 'version'> & {
  /** Start this version instead of the newest: one this runner registers for the name. */
  version?: VersionForName<W, N> | undefined;
};

/**
 * The arguments of {@link Runner.start} after the id: the input the workflow named `N` declares
 * (required when it cannot be `undefined`), then the options.
 */
export type StartArgs<W extends readonly AnyDefinition[], N> =
  undefined extends InputForName<W, N>
    ? [input?: InputForName<W, N>, options?: StartOptionsFor<W, N>]
    : [input: InputForName<W, N>, options?: StartOptionsFor<W, N>];

/** The signal names these definitions declare or listen for (any string once one is untyped). */
export type SignalNameOf<W extends readonly AnyDefinition[]> = W[number] extends infer D
  ? D extends unknown
    ? keyof SignalsOf<D> & string
    : never
  : never;

/** `startIfMissing` of {@link Runner.signal}: one of the registered workflows, with its input. */
export type StartIfMissingOf<W extends readonly AnyDefinition[]> = W[number] extends infer D
  ? D extends unknown
    ? {
        workflow: NameOf<D>;
        input?: InputOf<D>;
        version?: VersionOf<D>;
        reuseFinished?: boolean;
        priority?: number;
      }
    : never
  : never;

// Per definition (distributed): the type `D` declares for signal `K`, never when it takes any data for it.
type DeclaredData<D, K> = K extends keyof SignalsOf<D>
  ? unknown extends SignalsOf<D>[K]
    ? never
    : SignalsOf<D>[K]
  : never;
type DeclaredDataEach<W extends readonly AnyDefinition[], K> = W[number] extends infer D
  ? D extends unknown
    ? DeclaredData<D, K>
    : never
  : never;

/**
 * The data signal `K` takes across these definitions: the type `.signal(name, schema)` (or a human
 * step) declares for it; a union when two workflows declare `K` with different types, as either
 * may be the instance's. A workflow that takes any data for `K` (undeclared signals, a JSON
 * definition) does not widen a declared type; `unknown` when none declares one.
 */
export type SignalDataOf<W extends readonly AnyDefinition[], K> = [DeclaredDataEach<W, K>] extends [never]
  ? unknown
  : DeclaredDataEach<W, K>;

/**
 * What {@link Runner.signal} and {@link Runner.send} take after the name: the signal's data (required
 * unless it may be undefined, as the typed client asks), then the options `O`.
 */
export type SignalArgsOf<W extends readonly AnyDefinition[], K, O> =
  undefined extends SignalDataOf<W, K>
    ? [data?: SignalDataOf<W, K>, options?: O | undefined]
    : [data: SignalDataOf<W, K>, options?: O | undefined];

/** Options of {@link Runner.signal} of a runner of `W`: `startIfMissing` names one of them, with its input. */
export type RunnerSignalOptions<W extends readonly AnyDefinition[]> = Omit<
  SignalOptions,
  'startIfMissing'
> & {
  startIfMissing?: StartIfMissingOf<W> | undefined;
};

/**
 * A `requeue`'s `inputPatch`, for the runner, its typed client and the test harness alike: some
 * fields of the declared input when it is an object; any record when the input is untyped or not
 * an object (the patched input is then held against the declared schema at run time).
 */
export type InputPatchOf<D> = D extends unknown
  ? unknown extends InputOf<D>
    ? Record<string, unknown>
    : InputOf<D> extends readonly unknown[]
      ? Record<string, unknown>
      : InputOf<D> extends object
        ? { [K in keyof InputOf<D>]?: InputOf<D>[K] }
        : Record<string, unknown>
  : never;

/** The step ids of these definitions (any string once one is untyped). */
export type StepIdIn<W extends readonly AnyDefinition[]> = W[number] extends infer D
  ? D extends unknown
    ? StepIdOf<D>
    : never
  : never;

/** The output of step `K` of a definition, as stored (`unknown` for a step without a declared output). */
export type StepOutputAt<D, K> = K extends keyof StepOutputsOf<D> ? StepOutputsOf<D>[K] : unknown;

/**
 * A snapshot of a typed definition: its input, output and step outputs typed as stored (JSON);
 * `steps` has the definition's step ids as keys (any string for an untyped definition).
 */
export type TypedSnapshot<D> = Omit<Snapshot, 'input' | 'output' | 'steps'> & {
  input: InputOf<D>;
  output?: OutputOf<D> | undefined;
  steps: string extends StepIdOf<D>
    ? {
        [K in keyof StepOutputsOf<D>]?: Omit<StepState, 'output'> & { output?: StepOutputsOf<D>[K] };
      } & Record<string, StepState>
    : { [K in StepIdOf<D>]?: Omit<StepState, 'output'> & { output?: StepOutputAt<D, K> } };
};

/**
 * The runner's methods for one workflow version, typed by its definition: `runner.client(order)`.
 * It starts exactly the definition's version (not the newest registered), and answers only with
 * instances of that version: a call that meets an instance of another workflow or version throws
 * `WORKFLOW_MISMATCH` and writes nothing (`get` too; the untyped `runner.get` reads any instance).
 */
export interface WorkflowClient<D> {
  /** Starts an instance of the definition's own version. */
  start(id: string, input: InputOf<D>, options?: Omit<StartOptions, 'version'>): Promise<TypedSnapshot<D>>;
  /** {@link Runner.signal}; `startIfMissing` starts the definition's own version. */
  signal<K extends keyof SignalsOf<D> & string>(
    id: string,
    name: K,
    data: SignalsOf<D>[K],
    options?: {
      signalId?: string;
      startIfMissing?: { input: InputOf<D>; reuseFinished?: boolean; priority?: number };
    },
  ): Promise<TypedSnapshot<D>>;
  /**
   * {@link Runner.send}, the name and data checked against this workflow's signals by the
   * compiler. It writes without reading the instance, so the instance's own version decides.
   */
  send<K extends keyof SignalsOf<D> & string>(
    id: string,
    name: K,
    data: SignalsOf<D>[K],
    options?: SendOptions,
  ): Promise<SendResult>;
  /** The stored instance, or null; `WORKFLOW_MISMATCH` if it runs another workflow or version. */
  get(id: string, options?: GetOptions): Promise<TypedSnapshot<D> | null>;
  /** {@link Runner.cancel}, refused (`WORKFLOW_MISMATCH`, nothing written) for another version's instance. */
  cancel(id: string, reason?: string): Promise<TypedSnapshot<D>>;
  /** {@link Runner.abort}, refused (`WORKFLOW_MISMATCH`, nothing written) for another version's instance. */
  abort(id: string, reason?: string): Promise<TypedSnapshot<D>>;
  /** {@link Runner.requeue}, refused (`WORKFLOW_MISMATCH`, nothing written) for another version's instance. */
  requeue(
    id: string,
    options?: { step?: keyof StepOutputsOf<D> & string; inputPatch?: InputPatchOf<D> },
  ): Promise<TypedSnapshot<D>>;
}

/** Drives instances: applies events through the store with conditional writes and runs dispatched handlers. */
export interface Runner<W extends readonly AnyDefinition[] = readonly AnyDefinition[]> {
  /**
   * Starts an instance of a registered workflow (by name: any string once a JSON definition is
   * registered), its input typed by that workflow's declared input.
   */
  start<N extends WorkflowNameOf<W>>(workflow: N, id: string, ...args: StartArgs<W, N>): Promise<Snapshot>;
  /**
   * Applies a signal: the name one the workflows declare or listen for (any string once a JSON
   * definition is registered), with the data its schema declares (required unless it may be
   * undefined; any data for an undeclared signal); `startIfMissing` names one of the workflows,
   * with its input.
   */
  signal<K extends SignalNameOf<W>>(
    id: string,
    name: K,
    ...args: SignalArgsOf<W, K, RunnerSignalOptions<W>>
  ): Promise<Snapshot>;
  /**
   * Writes a signal for a worker to apply and resolves once it is written, without applying it:
   * on a store with an inbox (`Store.inbox`) that is one write, and the worker that hears its notice
   * applies it and starts what it dispatches in one more. The name and data are checked first, by
   * the compiler as `signal`'s are (a name the workflows declare or listen for, the data its
   * schema declares) and at run time (`UNKNOWN_SIGNAL`, `INVALID_INPUT`, as `signal` does); a
   * missing or finished instance, or one on a definition this runner does not register, takes
   * `signal`'s path and its errors. Signals sent to one instance apply in the order sent, after
   * events already written; a later `signal` or `cancel` from elsewhere may apply before them. On
   * a store without an inbox it is `signal` with `wait: 'write'`. Resolves with what happened ({@link SendResult}): `queued`, `applied`,
   * `finished` (nothing written; with `rejectFinished`, `INSTANCE_FINISHED` is thrown instead) or
   * `unchanged`.
   *
   * @example
   * const sent = await runner.send('order-42', 'approved', { by: 'ana' }); // a worker applies it
   * if (sent.status === 'finished') return { status: 409, body: `order ${sent.finished}` };
   */
  send<K extends SignalNameOf<W>>(
    id: string,
    name: K,
    ...args: SignalArgsOf<W, K, SendOptions>
  ): Promise<SendResult>;
  /**
   * Applies the signal a callback token names (see `callbackTokens`), with `data` as its payload,
   * if the token is good (`CALLBACK_INVALID`, `CALLBACK_EXPIRED`) and its step still waits at the
   * iteration it names (`STEP_NOT_WAITING`); once, whoever presents it again. Nothing is written
   * when it is refused. Needs the runner's `callbacks` option (`INVALID_OPTIONS` otherwise).
   *
   * @example
   * const s = await runner.callback(tokenFromTheLink, { decision: 'approve' });
   */
  callback(token: string, data?: unknown, options?: CallOptions): Promise<Snapshot>;
  /**
   * Starts a run of each registered workflow whose newest version names the event in `on` and whose
   * filter its data passes, with the data as input, under the id `<workflow>:<event id>`: once per
   * event id, however often it is published (a run that exists is reported in `existed`). A
   * workflow refusing the data does not stop the others (`refused`); a store failure throws, and
   * publishing again is safe.
   *
   * @example
   * const r = await runner.publish({ name: 'order.placed', id: 'evt-81', data: { orderId: 'o-7', total: 120 } });
   * // r.started: [{ workflow: 'fulfil', version: 1, id: 'fulfil:evt-81' }]
   */
  publish(event: PublishedEvent, options?: CallOptions): Promise<PublishResult>;
  cancel(id: string, reason?: string): Promise<Snapshot>;
  abort(id: string, reason?: string): Promise<Snapshot>;
  /**
   * Runs a parked (dlq) instance again from its failed step, or `step` (a step id of the
   * workflows); `inputPatch` sets some fields of its input, which must then fit its declared input
   * (`INVALID_INPUT`, nothing written).
   */
  requeue(
    id: string,
    options?: { step?: StepIdIn<W>; inputPatch?: InputPatchOf<W[number]> } & CallOptions,
  ): Promise<Snapshot>;
  /** The stored instance, or null; with payloads, its references resolved (unless `resolve: false`). */
  get(id: string, options?: GetOptions): Promise<Snapshot | null>;
  tick(id: string, now?: number): Promise<Snapshot>;
  /** Ticks up to `limit` due instances; returns their ids. */
  processDue(now?: number, limit?: number): Promise<string[]>;
  /** Applies one message; every method above is this with the message it describes. */
  handle(message: RunnerMessage): Promise<HandleResult>;
  /** The methods for one of this runner's workflows, typed by its definition. */
  client<D extends W[number]>(definition: D): WorkflowClient<D>;
  /**
   * Never matches a definition: the overload the compiler reports last when `definition` is not
   * one of this runner's `workflows`, so the error ends with what is wrong.
   */
  client(definition: 'this definition is not one of the workflows of this runner'): never;
  /** Resolves when every handler this runner started has reported back. */
  idle(): Promise<void>;
  /** Names of the workflows this runner knows. */
  readonly workflows: readonly string[];
  /** The store this runner writes to. */
  readonly store: Store;
  /** Write counters (a worker reports conflicts from here). */
  readonly stats: RunnerStats;
}

export type { PublishedEvent, PublishResult, TriggeredRun } from './publish-port.js';
