import { ValidationError } from '../errors.js';
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
  ItemMapping,
  ItemOf,
  ItemsPath,
  MapCheck,
  MapFields,
  MapOutput,
  MapSpecs,
} from './builder-compose.js';
import type {
  BuildCheck,
  Fields,
  HandlerName,
  Handlers,
  Mapped,
  Mapping,
  NameIn,
  NewId,
  OutputCheck,
  Payload,
  RawOutput,
  SpecOf,
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
}

/**
 * What the typed builder knows so far, one record that each step updates (see {@link Next}):
 * the workflow's `name` and `input`, the `handlers` types (from `handlers<typeof impl>()`), each
 * step's output in `outputs`, the `signals`, what the runner must provide for each handler name in
 * `uses`, the declared workflow `output`, whether only declared signals may be used (`strict`),
 * the step `ids` used so far (a second use does not compile), the `last` step's output (checked
 * against `output` by `build()`), the child and map steps that start workflows with the workflow
 * each starts (`children`: `createRunner` checks the workflows are registered, the harness types
 * its children by them), and the step `kinds` beyond the core it uses (`createRunner` needs them in `kinds`).
 */
export interface BuilderState {
  name: string;
  input: unknown;
  handlers: Handlers;
  outputs: unknown;
  signals: unknown;
  uses: unknown;
  output: unknown;
  strict: boolean;
  ids: string;
  last: unknown;
  children: ChildStep;
  kinds: string;
}

/** The state of a new builder named `N`. */
export interface Initial<N extends string> extends BuilderState {
  name: N;
  input: unknown;
  handlers: Empty;
  outputs: Empty;
  signals: Empty;
  uses: Empty;
  output: unknown;
  strict: false;
  ids: never;
  last: never;
  children: never;
  kinds: never;
}

/** `B` with the fields of `C` replaced. */
export type Next<B extends BuilderState, C extends Partial<BuilderState>> = {
  [K in keyof BuilderState]: K extends keyof C ? C[K] : B[K];
};

/** `B` after a step `Id` whose output is `Out` (also the last output, unless `Last` says otherwise). */
type Stepped<B extends BuilderState, Id extends string, Out, Last = Out> = Next<
  B,
  { outputs: B['outputs'] & { [P in Id]: Out }; ids: B['ids'] | Id; last: Last }
>;

/** `B` after a step `Id` that outputs nothing later steps read. */
type Passed<B extends BuilderState, Id extends string, Last> = Next<B, { ids: B['ids'] | Id; last: Last }>;

/** The data a mapping of `B` reads: the workflow input and the outputs so far. */
type DataOf<B extends BuilderState> = StepData<B['input'], B['outputs']>;

/**
 * Typed builder for definitions. Steps run in the order added: a step without `next` (and
 * without `end: true`) continues with the step added after it. `build()` validates everything.
 * Its type follows the data as steps are added (see {@link BuilderState}). Names a step refers to
 * forward (`next`, `branches`, `onTimeout`) stay strings, checked by `build()`.
 */
export class WorkflowBuilder<B extends BuilderState = Initial<string>> {
  private readonly steps: Array<StepDefinition & { id: string; end?: boolean }> = [];
  private readonly schemas: DeclaredSchemas = { signals: {}, outputs: {} };

  constructor(
    private readonly name: B['name'],
    private readonly version: number,
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

  /** Declares the workflow input with a schema (checked by `start`), or only its type: `input<Order>()`. */
  input<T>(): WorkflowBuilder<Next<B, { input: T }>>;
  input<Sch extends StandardSchema>(schema: Sch): WorkflowBuilder<Next<B, { input: InferSchema<Sch> }>>;
  input(schema?: StandardSchema): unknown {
    if (schema) this.schemas.input = schema;
    return this;
  }

  /** Declares the workflow output's type (the output of the last step, or of a `succeed` mapping). */
  output<T>(): WorkflowBuilder<Next<B, { output: T }>>;
  output<Sch extends StandardSchema>(schema: Sch): WorkflowBuilder<Next<B, { output: InferSchema<Sch> }>>;
  output(): unknown {
    return this;
  }

  /** Takes the handler types from their implementation (a type-only import): `handlers<typeof handlers>()`. */
  handlers<Impl extends Record<string, (ctx: never) => unknown>>(): WorkflowBuilder<
    Next<B, { handlers: { [K in keyof Impl & string]: SpecOf<Impl[K]> } }>
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
  ): WorkflowBuilder<Next<B, { signals: B['signals'] & { [P in Name]: InferSchema<Sch> }; strict: true }>> {
    this.schemas.signals[name] = schema;
    return this as never;
  }

  /** A handler call, retried per policy, optionally compensated. */
  task<
    const Id extends string,
    const K extends HandlerName<B['handlers']>,
    const M extends Mapping<B['input'], B['outputs']> | undefined = undefined,
    const C extends HandlerName<B['handlers']> | undefined = undefined,
    Out = never,
  >(
    id: NewId<Id, B['ids']>,
    fields: TaskFields<K, M, C, Out> &
      NoInfer<TaskCheck<Mapped<B['input'], B['outputs'], M>, B['handlers'], K, M>>,
  ): WorkflowBuilder<
    Next<
      Stepped<B, Id, TaskOutput<B['handlers'], K, Out>>,
      {
        uses: B['uses'] & {
          [P in K]: { input: Mapped<B['input'], B['outputs'], M>; output: RawOutput<B['handlers'], K, Out> };
        } & { [P in C & string]: { input: Mapped<B['input'], B['outputs'], M>; output: unknown } };
      }
    >
  > {
    const { output, ...rest } = fields as { output?: StandardSchema };
    if (output) this.schemas.outputs[id] = output;
    return this.add('task', id, rest);
  }
  /** Branches on conditions over `{ input, outputs }` (their `var` paths checked like mappings). */
  choice<const Id extends string>(
    id: NewId<Id, B['ids']>,
    fields: Omit<Fields<'choice'>, 'branches'> & {
      branches: ReadonlyArray<{ when: TypedCondition<DataPath<B['input'], B['outputs']>>; next: string }>;
    },
  ): WorkflowBuilder<Passed<B, Id, never>> {
    return this.add('choice', id, fields);
  }
  /** Forks branches (entry step ids) and joins them; its output is the branches' outputs in order. */
  parallel<const Id extends string>(
    id: NewId<Id, B['ids']>,
    fields: Fields<'parallel'>,
  ): WorkflowBuilder<Stepped<B, Id, unknown[]>> {
    return this.add('parallel', id, fields);
  }
  /** Waits for a named signal, optionally with a timeout; its output is the payload. */
  wait<const Id extends string, const Sig extends NameIn<B['signals'], B['strict']>>(
    id: NewId<Id, B['ids']>,
    fields: Omit<Fields<'wait'>, 'signal'> & { signal: Sig },
  ): WorkflowBuilder<Stepped<B, Id, Payload<B['signals'], Sig>>> {
    return this.add('wait', id, fields);
  }
  /** Waits for a human decision `{ decision: 'approve' | 'reject' }` on the signal named after the step (or `signal`). */
  human<const Id extends string, const Sig extends string = Id>(
    id: NewId<Id, B['ids']>,
    fields: Omit<Fields<'human'>, 'signal'> & { signal?: Sig } = {},
  ): WorkflowBuilder<
    Next<
      Stepped<B, Id, HumanDecision>,
      // HumanDecision spelled out (not the alias), so a wrong payload's first error line shows 'approve' | 'reject'.
      {
        signals: B['signals'] & {
          [P in Sig]: ({ decision: 'approve' | 'reject' } | { approved: boolean }) & Record<string, unknown>;
        };
      }
    >
  > {
    return this.add('human', id, fields);
  }
  /** A durable timer: `ms` from now, or `until` an epoch-ms value in the data. */
  sleep<const Id extends string>(
    id: NewId<Id, B['ids']>,
    fields: Omit<Fields<'sleep'>, 'until'> & { until?: DataPath<B['input'], B['outputs']> },
  ): WorkflowBuilder<Passed<B, Id, undefined>> {
    return this.add('sleep', id, fields);
  }
  /** Batches a signal's payloads until `maxItems`, `idleMs` of quiet, or `maxWaitMs`; its output is the batch. */
  collect<const Id extends string, const Sig extends NameIn<B['signals'], B['strict']>>(
    id: NewId<Id, B['ids']>,
    fields: Omit<Fields<'collect'>, 'signal'> & { signal: Sig },
  ): WorkflowBuilder<Stepped<B, Id, Array<Payload<B['signals'], Sig>>>> {
    return this.add('collect', id, fields);
  }
  /** Rollback after a failure stops here (a cancel still goes past it). */
  savepoint<const Id extends string>(
    id: NewId<Id, B['ids']>,
    fields: Fields<'savepoint'> = {},
  ): WorkflowBuilder<Passed<B, Id, undefined>> {
    return this.add('savepoint', id, fields);
  }
  /** Ends the run and starts a fresh one of the same instance, with `carry` (default: the same input). */
  continueAsNew<
    const Id extends string,
    const M extends Mapping<B['input'], B['outputs']> | undefined = undefined,
  >(
    id: NewId<Id, B['ids']>,
    fields: Omit<Fields<'continueAsNew'>, 'carry'> & { carry?: M } = {},
  ): WorkflowBuilder<Passed<B, Id, never>> {
    return this.add('continueAsNew', id, fields);
  }
  /**
   * Completes the workflow (or its parallel branch), with `output` mapped from the data; with
   * `.output()` declared, the mapped output must fit it.
   */
  succeed<const Id extends string, const M extends Mapping<B['input'], B['outputs']> | undefined = undefined>(
    id: NewId<Id, B['ids']>,
    fields: Omit<Fields<'succeed'>, 'output'> & { output?: M } & NoInfer<
        OutputCheck<[M] extends [undefined] ? undefined : Resolve<DataOf<B>, M>, B['output']>
      > = {} as never,
  ): WorkflowBuilder<Passed<B, Id, never>> {
    return this.add('succeed', id, fields);
  }
  /**
   * Starts another workflow as its own instance and waits for its end; the step's output is the
   * child's declared output, and its input (mapped, else the workflow input) must fit the child's.
   * Runs where `kinds: [composition]` is passed (`@stepfold/engine/composition`).
   */
  child<
    const Id extends string,
    W extends ChildWorkflow,
    const M extends Mapping<B['input'], B['outputs']> | undefined = undefined,
    const C extends HandlerName<B['handlers']> | undefined = undefined,
  >(
    id: NewId<Id, B['ids']> & ChildCheck<Mapped<B['input'], B['outputs'], M>, W, M>['id'],
    fields: ChildFields<W, M, C, B['input'], B['outputs']> &
      NoInfer<ChildCheck<Mapped<B['input'], B['outputs'], M>, W, M>['fields']>,
  ): WorkflowBuilder<
    Next<
      Stepped<B, Id, ChildOutput<W>>,
      {
        uses: B['uses'] & CompensateSpec<C, Mapped<B['input'], B['outputs'], M>>;
        children: B['children'] | ChildStepOf<Id, W>;
        kinds: B['kinds'] | 'child';
      }
    >
  > {
    return this.add('child', id, named(fields));
  }
  /**
   * Runs a handler (or starts a child workflow) per element of the array at `items`, at most
   * `maxConcurrency` at a time; each gets its item (or `input` mapped from `item`, `index` and the
   * data). Its output is the results in item order, or a summary (`results`, and workflow maps).
   * Runs where `kinds: [composition]` is passed (`@stepfold/engine/composition`).
   */
  map<
    const Id extends string,
    const P extends DataPath<B['input'], B['outputs']>,
    const K extends HandlerName<B['handlers']> | undefined = undefined,
    W extends ChildWorkflow | undefined = undefined,
    const M extends ItemMapping<B['input'], B['outputs'], ItemOf<DataOf<B>, P>> | undefined = undefined,
    const C extends HandlerName<B['handlers']> | undefined = undefined,
    const R extends 'collect' | 'discard' | undefined = undefined,
  >(
    id: NewId<Id, B['ids']>,
    fields: MapFields<ItemsPath<DataOf<B>, P>, K, W, M, C, R> &
      NoInfer<
        MapCheck<
          ItemInput<B['input'], B['outputs'], ItemOf<DataOf<B>, P>, M>,
          B['handlers'],
          K,
          W,
          M,
          IsArrayPath<DataOf<B>, P>
        >
      >,
  ): WorkflowBuilder<
    Next<
      Stepped<B, Id, MapOutput<B['handlers'], K, W, R>>,
      {
        uses: B['uses'] &
          MapSpecs<B['handlers'], K, C, ItemInput<B['input'], B['outputs'], ItemOf<DataOf<B>, P>, M>>;
        children: B['children'] | ChildStepOf<Id, W>;
        kinds: B['kinds'] | 'map';
      }
    >
  > {
    return this.add('map', id, named(fields));
  }
  /** Fails the workflow with the given error. */
  fail<const Id extends string>(
    id: NewId<Id, B['ids']>,
    fields: Fields<'fail'> = {},
  ): WorkflowBuilder<Passed<B, Id, never>> {
    return this.add('fail', id, fields);
  }

  /** The definition as plain JSON, not yet validated. */
  toJSON(): DefinitionInput {
    const { onFailure, defaults, limits, description, acceptUnknownSignals } = this.options;
    return {
      name: this.name,
      version: this.version,
      start: this.steps[0]?.id ?? '',
      ...(description === undefined ? {} : { description }),
      ...(onFailure === undefined ? {} : { onFailure }),
      ...(defaults === undefined ? {} : { defaults }),
      ...(limits === undefined ? {} : { limits }),
      ...(acceptUnknownSignals === undefined ? {} : { acceptUnknownSignals }),
      steps: this.steps.map(({ end: _end, ...s }) => s as StepDefinition),
    };
  }

  /**
   * Validates and returns the definition (the JSON form, carrying its types for the compiler);
   * throws `INVALID_DEFINITION` listing every problem, including declared signals no step listens for.
   */
  build(..._check: BuildCheck<B['last'], B['output']>): TypedDefinition<{
    name: B['name'];
    input: B['input'];
    output: B['output'];
    outputs: B['outputs'];
    signals: B['strict'] extends true ? B['signals'] : B['signals'] & Record<string, unknown>;
    handlers: B['uses'];
    steps: B['ids'];
    children: B['children']['workflow'];
    childSteps: B['children'];
    kinds: B['kinds'];
  }> {
    // What the types refuse, refused again for callers that bypassed them; listed with the
    // definition's own issues, in one error.
    const { input, signals, outputs } = this.schemas;
    const issues = [
      ...signalIssues(this.steps, signals),
      ...(input ? inputPathIssues(this.steps, input) : []),
    ];
    let definition: WorkflowDefinition | undefined;
    try {
      definition = defineWorkflow(this.toJSON());
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
export function workflow<const N extends string>(
  name: N,
  version: number,
  options?: WorkflowOptions,
): WorkflowBuilder<Initial<N>> {
  return new WorkflowBuilder(name, version, options);
}
