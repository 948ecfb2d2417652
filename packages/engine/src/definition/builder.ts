import { ValidationError } from '../errors.js';
import type { SearchAttribute, SearchType } from '../search.js';
import { inputPathIssues, signalIssues } from './builder-checks.js';
import type {
  ChildCheck,
  ChildFields,
  ChildOutput,
  ChildStepOf,
  ChildWorkflow,
  CompensateSpec,
  IsArrayPath,
  ItemInput,
  ItemKeyPath,
  ItemMapping,
  ItemOf,
  ItemsPath,
  MapCheck,
  MapFields,
  MapOutput,
  MapSpecs,
  MapTasks,
} from './builder-compose.js';
import type {
  BuildCheck,
  CollectBound,
  CollectBounds,
  DecisionOutput,
  Fields,
  HandlerName,
  Handlers,
  KeyPath,
  LimitsOf,
  Mapped,
  Mapping,
  NameIn,
  NewId,
  Payload,
  RawOutput,
  SearchPath,
  SleepTiming,
  SpecOf,
  SucceedCheck,
  TaskCheck,
  TaskFields,
  TaskOutput,
} from './builder-types.js';
import { defineWorkflow } from './compile.js';
import { type DeclaredSchemas, declareSchemas } from './declared-schemas.js';
import { kindOf } from './kinds/index.js';
import type {
  DefinitionInput,
  FailurePolicy,
  RetryPolicyInput,
  StepDefinition,
  WorkflowDefinition,
} from './schema.js';
import type { Condition } from './step-fields.js';
import type { Trigger } from './triggers.js';
import type { ChildStep, HumanDecision, TypedDefinition } from './typed-definition.js';
import type { DataPath, InferSchema, Resolve, StandardSchema, StepData, TypedCondition } from './typing.js';

export type { TaskFields } from './builder-types.js';

// Local (not exported), so declaration files of built definitions spell it out.
/** No keys yet. */
type Empty = Record<never, never>;

/** Workflow-level options of {@link workflow}. */
export interface WorkflowOptions {
  onFailure?: FailurePolicy | undefined;
  defaults?: { retry?: RetryPolicyInput; timeoutMs?: number } | undefined;
  /**
   * `inbox`: buffered signals (default 100); `log`: transitions kept in the snapshot (default 16;
   * hooks see every transition whatever the limit); `signalIds`: recent signal ids remembered for
   * deduplication (default 64).
   */
  limits?: { inbox?: number; log?: number; signalIds?: number } | undefined;
  /** Buffer signals no step listens for instead of refusing them with `UNKNOWN_SIGNAL` (default false). */
  acceptUnknownSignals?: boolean | undefined;
  description?: string | undefined;
  /**
   * At most `limit` instances per value of `key` (an `input.` path: an instance is admitted before
   * any step runs) past their start at once, across every runner sharing the store.
   */
  concurrency?: WorkflowLimit | readonly WorkflowLimit[] | undefined;
  /** The runs' priority: an integer from 0 to 1000 (higher first) or an `input.` path to one; a start's `priority` option wins. */
  priority?: number | InputPath | undefined;
  /** Fairness across the values of `key` (an `input.` path): due work is taken by the stores in turns across them (`Snapshot.fairKey`). */
  fairness?: { key: InputPath } | undefined;
}

/** A path into the workflow input (the options come before `.input()`, so it is not typed further). */
type InputPath = 'input' | `input.${string}`;
/** An instance limit of {@link WorkflowOptions}. */
export interface WorkflowLimit {
  /** An `input.` path whose value (a string, number or boolean) names the counter; none: one counter. */
  key?: InputPath | undefined;
  /** At most this many instances at once: a positive integer. */
  limit: number;
  /** The counter's name, shared by every workflow naming it (default: the workflow's name). */
  scope?: string | undefined;
}

/**
 * Typed builder for definitions. Steps run in the order added: a step without `next` (and
 * without `end: true`) continues with the step added after it. `build()` validates everything.
 *
 * The type parameters follow the data as steps are added: the workflow input `WI`, the handler
 * types `H` (from `handlers<typeof impl>()`), each step's output `O`, the signals `S`, what the
 * runner must provide for each handler name `U`, the declared workflow output `WO`, the step ids
 * used so far `Ids` (a second use does not compile), the last step's output `Last` (checked
 * against `WO` by `build()`), the workflows child and map steps start `Ch`, by step (checked by
 * `createRunner`), and the step kinds beyond the core it uses `Kd` (`createRunner` asks for them in
 * `kinds`). Positional rather than one record: a record updated per step nests an instantiation
 * per step, which TypeScript refuses (TS2589) at about 30 steps; these stay flat past 100. Names a step refers to forward (`next`, `branches`, `onTimeout`) stay strings,
 * checked by `build()`.
 */
export class WorkflowBuilder<
  N extends string = string,
  WI = unknown,
  H extends Handlers = Empty,
  O = Empty,
  S = Empty,
  U = Empty,
  WO = unknown,
  Strict extends boolean = false,
  Ids extends string = never,
  Last = never,
  Ch extends ChildStep = never,
  Kd extends string = never,
  Tk = Empty,
  Fk extends boolean = false,
  V extends number = number,
> {
  private readonly steps: Array<StepDefinition & { id: string; end?: boolean }> = [];
  private readonly schemas: DeclaredSchemas = { signals: {}, outputs: {} };
  private readonly triggers: Trigger[] = [];
  // Declared, not initialised: a builder without attributes carries no field for them.
  declare private attributes?: Record<string, SearchAttribute>;

  constructor(
    private readonly name: N,
    private readonly version: V,
    private readonly options: WorkflowOptions = {},
  ) {}

  private add<K extends StepDefinition['kind']>(kind: K, id: string, fields: object): never {
    const prev = this.steps[this.steps.length - 1];
    const facts = prev && kindOf(prev);
    // A step is linked to the one added after it when its kind has a `next` it left unset, but not
    // to a branch it forks: the branch is entered by the fork.
    if (prev && !prev.end && facts?.links && (prev as { next?: string }).next === undefined) {
      if (!facts.forks?.(prev).includes(id)) (prev as { next?: string }).next = id;
    }
    this.steps.push({ ...fields, kind, id } as unknown as StepDefinition & { id: string; end?: boolean });
    return this as never;
  }

  /**
   * Declares a search attribute: a typed value every store indexes, for `store.list({ where,
   * orderBy })`. With `from` (an `input.…` path, or `outputs.<step>.…` of a step added before, whose
   * value fits `type`), it is read from the data after every event; without, handlers set it with
   * `ctx.setAttributes`. Place it after the steps its path reads. Runs only with
   * `kinds: [searchAttributes]`.
   */
  search<T extends SearchType>(
    name: string,
    attribute: { type: T; from?: SearchPath<WI, O, T> },
  ): WorkflowBuilder<N, WI, H, O, S, U, WO, Strict, Ids, Last, Ch, Kd | 'search', Tk, Fk, V> {
    this.attributes ??= {};
    this.attributes[name] = { ...attribute };
    return this as never;
  }

  /** Declares the workflow input with a schema (checked by `start`), or only its type: `input<Order>()`. */
  input<T>(): WorkflowBuilder<N, T, H, O, S, U, WO, Strict, Ids, Last, Ch, Kd, Tk, Fk, V>;
  input<Sch extends StandardSchema>(
    schema: Sch,
  ): WorkflowBuilder<N, InferSchema<Sch>, H, O, S, U, WO, Strict, Ids, Last, Ch, Kd, Tk, Fk, V>;
  input(schema?: StandardSchema): unknown {
    if (schema) this.schemas.input = schema;
    return this;
  }

  /**
   * Starts a run on each published event named `event` (`runner.publish`), the event's data as its
   * input; `filter` (a condition over `input` paths, typed by the declared input) picks which.
   *
   * @example
   * workflow('fulfil', 1).input(order).on('order.placed', { filter: { '>=': [{ var: 'input.total' }, 100] } })
   */
  on(event: string, options: { filter?: TypedCondition<DataPath<WI, Empty>> } = {}): this {
    this.triggers.push(
      options.filter === undefined ? { event } : { event, filter: options.filter as Condition },
    );
    return this;
  }

  /** Declares the workflow output's type (the output of the last step, or of a `succeed` mapping). */
  output<T>(): WorkflowBuilder<N, WI, H, O, S, U, T, Strict, Ids, Last, Ch, Kd, Tk, Fk, V>;
  output<Sch extends StandardSchema>(
    schema: Sch,
  ): WorkflowBuilder<N, WI, H, O, S, U, InferSchema<Sch>, Strict, Ids, Last, Ch, Kd, Tk, Fk, V>;
  output(): unknown {
    return this;
  }

  /** Takes the handler types from their implementation (a type-only import): `handlers<typeof handlers>()`. */
  handlers<Impl extends Record<string, (ctx: never) => unknown>>(): WorkflowBuilder<
    N,
    WI,
    { [K in keyof Impl & string]: SpecOf<Impl[K]> },
    O,
    S,
    U,
    WO,
    Strict,
    Ids,
    Last,
    Ch,
    Kd,
    Tk,
    Fk,
    V
  > {
    return this as never;
  }

  /**
   * Declares a signal and its payload schema (checked by `signal`; `type<T>()` declares only the
   * type). Once one is declared, steps may listen only for declared names.
   */
  signal<const Name extends string, Sch extends StandardSchema>(
    name: Name,
    schema: Sch,
  ): WorkflowBuilder<
    N,
    WI,
    H,
    O,
    S & { [P in Name]: InferSchema<Sch> },
    U,
    WO,
    true,
    Ids,
    Last,
    Ch,
    Kd,
    Tk,
    Fk,
    V
  > {
    this.schemas.signals[name] = schema;
    return this as never;
  }

  /** A handler call, retried per policy, optionally compensated. */
  task<
    const Id extends string,
    const K extends HandlerName<H>,
    const M extends Mapping<WI, O> | undefined = undefined,
    const C extends HandlerName<H> | undefined = undefined,
    Out = never,
    // Each `never` unless its field is written (then the limit's literal, checked, or `number`).
    const Lim extends number = never,
    const RLim extends number = never,
    const Per extends number = number,
    const LLim extends number = never,
    const LRLim extends number = never,
    // `never` unless written: a literal heartbeat is checked, and against a literal timeout.
    const HB extends number = never,
    const TO extends number = never,
  >(
    id: NewId<Id, Ids>,
    fields: TaskFields<K, M, C, Out, KeyPath<WI, O>, Lim, RLim, Per, LLim, LRLim, HB, TO> &
      NoInfer<TaskCheck<Mapped<WI, O, M>, H, K, M>>,
  ): WorkflowBuilder<
    N,
    WI,
    H,
    O & { [P in Id]: TaskOutput<H, K, Out> },
    S,
    U & { [P in K]: { input: Mapped<WI, O, M>; output: RawOutput<H, K, Out> } } & {
      [P in C & string]: { input: Mapped<WI, O, M>; output: unknown };
    },
    WO,
    Strict,
    Ids | Id,
    TaskOutput<H, K, Out>,
    Ch,
    Kd | LimitsOf<Lim | RLim | LLim | LRLim>,
    Tk & { [P in Id]: TaskOutput<H, K, Out> },
    Fk,
    V
  > {
    const { output, ...rest } = fields as { output?: StandardSchema };
    if (output) this.schemas.outputs[id] = output;
    return this.add('task', id, rest);
  }
  /** Branches on conditions over `{ input, outputs }` (their `var` paths checked like mappings). */
  choice<const Id extends string>(
    id: NewId<Id, Ids>,
    fields: Omit<Fields<'choice'>, 'branches'> & {
      branches: ReadonlyArray<{ when: TypedCondition<DataPath<WI, O>>; next: string }>;
    },
  ): WorkflowBuilder<N, WI, H, O, S, U, WO, Strict, Ids | Id, never, Ch, Kd, Tk, Fk, V> {
    return this.add('choice', id, fields);
  }
  /** Forks branches (entry step ids) and joins them; its output is the branches' outputs in order. */
  parallel<const Id extends string>(
    id: NewId<Id, Ids>,
    fields: Fields<'parallel'>,
  ): WorkflowBuilder<
    N,
    WI,
    H,
    O & { [P in Id]: unknown[] },
    S,
    U,
    WO,
    Strict,
    Ids | Id,
    unknown[],
    Ch,
    Kd,
    Tk,
    true,
    V
  > {
    return this.add('parallel', id, fields);
  }
  /** Waits for a named signal, optionally with a timeout; its output is the payload. */
  wait<const Id extends string, const Sig extends NameIn<S, Strict>>(
    id: NewId<Id, Ids>,
    fields: Omit<Fields<'wait'>, 'signal'> & { signal: Sig },
  ): WorkflowBuilder<
    N,
    WI,
    H,
    O & { [P in Id]: Payload<S, Sig> },
    S,
    U,
    WO,
    Strict,
    Ids | Id,
    Payload<S, Sig>,
    Ch,
    Kd,
    Tk,
    Fk,
    V
  > {
    return this.add('wait', id, fields);
  }
  /**
   * Waits for a human decision `{ decision: 'approve' | 'reject' }` on the signal named after the
   * step (or `signal`). Its output is the decision's payload: the type `.signal(name, schema)`
   * declared for that signal before this step, else {@link HumanDecision}.
   */
  human<const Id extends string, const Sig extends string = Id>(
    id: NewId<Id, Ids>,
    fields: Omit<Fields<'human'>, 'signal'> & { signal?: Sig } = {},
  ): WorkflowBuilder<
    N,
    WI,
    H,
    O & { [P in Id]: DecisionOutput<S, Sig> },
    // HumanDecision spelled out (not the alias), so a wrong payload's first error line shows 'approve' | 'reject'.
    S & {
      [P in Sig]: ({ decision: 'approve' | 'reject' } | { approved: boolean }) & Record<string, unknown>;
    },
    U,
    WO,
    Strict,
    Ids | Id,
    DecisionOutput<S, Sig>,
    Ch,
    Kd,
    Tk,
    Fk,
    V
  > {
    return this.add('human', id, fields);
  }
  /** A durable timer: `ms` from now, or `until` an epoch-ms value in the data. */
  sleep<const Id extends string>(
    id: NewId<Id, Ids>,
    fields: Omit<Fields<'sleep'>, 'until' | 'ms'> & SleepTiming<DataPath<WI, O>>,
  ): WorkflowBuilder<N, WI, H, O, S, U, WO, Strict, Ids | Id, undefined, Ch, Kd, Tk, Fk, V> {
    return this.add('sleep', id, fields);
  }
  /** Batches a signal's payloads until `maxItems`, `idleMs` of quiet, or `maxWaitMs`; its output is the batch. */
  collect<const Id extends string, const Sig extends NameIn<S, Strict>>(
    id: NewId<Id, Ids>,
    fields: Omit<Fields<'collect'>, 'signal' | CollectBound> & { signal: Sig } & CollectBounds,
  ): WorkflowBuilder<
    N,
    WI,
    H,
    O & { [P in Id]: Array<Payload<S, Sig>> },
    S,
    U,
    WO,
    Strict,
    Ids | Id,
    Array<Payload<S, Sig>>,
    Ch,
    Kd,
    Tk,
    Fk,
    V
  > {
    return this.add('collect', id, fields);
  }
  /** Rollback after a failure stops here (a cancel still goes past it). */
  savepoint<const Id extends string>(
    id: NewId<Id, Ids>,
    fields: Fields<'savepoint'> = {},
  ): WorkflowBuilder<N, WI, H, O, S, U, WO, Strict, Ids | Id, undefined, Ch, Kd, Tk, Fk, V> {
    return this.add('savepoint', id, fields);
  }
  /** Ends the run and starts a fresh one of the same instance, with `carry` (default: the same input). */
  continueAsNew<const Id extends string, const M extends Mapping<WI, O> | undefined = undefined>(
    id: NewId<Id, Ids>,
    fields: Omit<Fields<'continueAsNew'>, 'carry'> & { carry?: M } = {},
  ): WorkflowBuilder<N, WI, H, O, S, U, WO, Strict, Ids | Id, never, Ch, Kd, Tk, Fk, V> {
    return this.add('continueAsNew', id, fields);
  }
  /**
   * Completes the workflow (or its parallel branch), with `output` mapped from the data; with
   * `.output()` declared, the mapped output must fit it, and one without a mapping compiles only
   * once a parallel step has been added (a branch's succeed ends only its branch).
   */
  succeed<const Id extends string, const M extends Mapping<WI, O> | undefined = undefined>(
    id: NewId<Id, Ids>,
    fields: Omit<Fields<'succeed'>, 'output'> & { output?: M } & NoInfer<
        SucceedCheck<[M] extends [undefined] ? undefined : Resolve<StepData<WI, O>, M>, WO, Fk>
      > = {} as never,
  ): WorkflowBuilder<N, WI, H, O, S, U, WO, Strict, Ids | Id, never, Ch, Kd, Tk, Fk, V> {
    return this.add('succeed', id, fields);
  }
  /**
   * Starts another workflow as its own instance and waits for its end; the step's output is the
   * child's declared output, and its input (mapped, else the workflow input) must fit the child's.
   * Runs where `kinds: [composition]` is passed (`@stepfold/engine`).
   */
  child<
    const Id extends string,
    W extends ChildWorkflow,
    const M extends Mapping<WI, O> | undefined = undefined,
    const C extends HandlerName<H> | undefined = undefined,
    const Ver extends number | undefined = undefined,
  >(
    id: NewId<Id, Ids> & ChildCheck<Mapped<WI, O, M>, W, M>['id'],
    fields: ChildFields<W, M, C, WI, O> & { version?: Ver } & NoInfer<
        ChildCheck<Mapped<WI, O, M>, W, M>['fields']
      >,
  ): WorkflowBuilder<
    N,
    WI,
    H,
    O & { [P in Id]: ChildOutput<W> },
    S,
    U & CompensateSpec<C, Mapped<WI, O, M>>,
    WO,
    Strict,
    Ids | Id,
    ChildOutput<W>,
    Ch | ChildStepOf<Id, W, Ver>,
    Kd | 'child',
    Tk,
    Fk,
    V
  > {
    return this.add('child', id, named(fields));
  }
  /**
   * Runs a handler (or starts a child workflow) per element of the array at `items`, at most
   * `maxConcurrency` at a time; each gets its item (or `input` mapped from `item`, `index` and the
   * data). Its output is the results in item order, or a summary (`results`, and workflow maps).
   * Runs where `kinds: [composition]` is passed (`@stepfold/engine`).
   */
  map<
    const Id extends string,
    const P extends DataPath<WI, O>,
    const K extends HandlerName<H> | undefined = undefined,
    W extends ChildWorkflow | undefined = undefined,
    const M extends ItemMapping<WI, O, ItemOf<StepData<WI, O>, P>> | undefined = undefined,
    const C extends HandlerName<H> | undefined = undefined,
    const R extends 'collect' | 'discard' | undefined = undefined,
    const Ver extends number | undefined = undefined,
    const Lim extends number = never,
    const RLim extends number = never,
    const LLim extends number = never,
    const LRLim extends number = never,
  >(
    id: NewId<Id, Ids>,
    fields: MapFields<
      ItemsPath<StepData<WI, O>, P>,
      K,
      W,
      M,
      C,
      R,
      ItemKeyPath<WI, O, ItemOf<StepData<WI, O>, P>>,
      Lim,
      RLim,
      LLim,
      LRLim
    > & { version?: Ver } & NoInfer<
        MapCheck<ItemInput<WI, O, ItemOf<StepData<WI, O>, P>, M>, H, K, W, M, IsArrayPath<StepData<WI, O>, P>>
      >,
  ): WorkflowBuilder<
    N,
    WI,
    H,
    O & { [Q in Id]: MapOutput<H, K, W, R> },
    S,
    U & MapSpecs<H, K, C, ItemInput<WI, O, ItemOf<StepData<WI, O>, P>, M>>,
    WO,
    Strict,
    Ids | Id,
    MapOutput<H, K, W, R>,
    Ch | ChildStepOf<Id, W, Ver>,
    Kd | 'map' | LimitsOf<Lim | RLim | LLim | LRLim>,
    Tk & MapTasks<Id, H, K, W>,
    Fk,
    V
  > {
    return this.add('map', id, named(fields));
  }
  /** Fails the workflow with the given error. */
  fail<const Id extends string>(
    id: NewId<Id, Ids>,
    fields: Fields<'fail'> = {},
  ): WorkflowBuilder<N, WI, H, O, S, U, WO, Strict, Ids | Id, never, Ch, Kd, Tk, Fk, V> {
    return this.add('fail', id, fields);
  }

  /** The definition as plain JSON, not yet validated. */
  toJSON(): DefinitionInput {
    // Every workflow option is a header field of the JSON form; one left undefined is left out.
    const header: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(this.options)) if (v !== undefined) header[k] = v;
    return {
      name: this.name,
      version: this.version,
      start: this.steps[0]?.id ?? '',
      ...header,
      ...(this.attributes && { search: { ...this.attributes } }),
      ...(this.triggers.length ? { on: [...this.triggers] } : {}),
      steps: this.steps.map(({ end: _end, ...s }) => s as StepDefinition),
    } as DefinitionInput;
  }

  /**
   * Validates and returns the definition (the JSON form, carrying its types for the compiler);
   * throws `INVALID_DEFINITION` listing every problem, including declared signals no step listens for.
   */
  build(this: BuildCheck<Last, WO>): TypedDefinition<{
    name: N;
    version: V;
    input: WI;
    output: WO;
    outputs: O;
    signals: Strict extends true ? S : S & Record<string, unknown>;
    handlers: U;
    steps: Ids;
    children: Ch['workflow'];
    childSteps: Ch;
    kinds: Kd;
    tasks: Tk;
  }> {
    // `this` is typed as the check (so a mismatch's first line is its message): the builder itself.
    const self = this as unknown as WorkflowBuilder<N, WI, H, O, S, U, WO, Strict, Ids, Last, Ch, Kd>;
    // What the types refuse, refused again for callers that bypassed them; listed with the
    // definition's own issues, in one error.
    const { input, signals, outputs } = self.schemas;
    const issues = [
      ...signalIssues(self.steps, signals),
      ...(input ? inputPathIssues(self.steps, input) : []),
    ];
    let definition: WorkflowDefinition | undefined;
    try {
      definition = defineWorkflow(self.toJSON());
    } catch (e) {
      if (!issues.length || !(e instanceof ValidationError)) throw e;
      issues.push(...e.issues);
    }
    if (issues.length || !definition)
      throw new ValidationError('INVALID_DEFINITION', 'invalid workflow definition', issues);
    if (input || Object.keys(signals).length || Object.keys(outputs).length) {
      declareSchemas(definition, {
        ...(input ? { input } : {}),
        signals: { ...signals },
        outputs: { ...outputs },
      });
    }
    return definition;
  }
}

/** Fields with their `workflow` definition replaced by its name, as the JSON form has it. */
function named(fields: { workflow?: ChildWorkflow | undefined }): object {
  const w = fields.workflow;
  return w === undefined || typeof w === 'string' ? fields : { ...fields, workflow: w.name };
}

/**
 * Starts a definition builder for `name` at `version`; `build()` validates and returns the JSON form.
 *
 * @example
 * const order = workflow('order', 1)
 *   .task('reserve', { handler: 'reserveStock', compensate: 'releaseStock' })
 *   .task('charge', { handler: 'chargeCard', retry: { maxAttempts: 3 } })
 *   .human('approve', { timeoutMs: 86_400_000, onTimeout: 'expire' })
 *   .succeed('done', { end: true })
 *   .fail('expire', { error: { message: 'not approved in time' } })
 *   .build();
 */
export function workflow<
  const N extends string,
  const V extends number = number,
  Opt extends WorkflowOptions = WorkflowOptions,
>(
  name: N,
  version: V,
  options?: Opt,
): WorkflowBuilder<
  N,
  unknown,
  Empty,
  Empty,
  Empty,
  Empty,
  unknown,
  false,
  never,
  never,
  never,
  Opt extends { concurrency: object } | { priority: number | string } | { fairness: object }
    ? 'limits'
    : never,
  Empty,
  false,
  V
> {
  return new WorkflowBuilder(name, version, options);
}
