import type {
  ChildStepsOf,
  InputOf,
  NameOf,
  SignalsOf,
  StepIdOf,
  TaskOutputsOf,
  TaskStepIdOf,
} from '../definition/typed-definition.js';
import type { StepOptions } from '../reducer/reducer.js';
import type { AnyDefinition, HandlerSpecsFor } from '../runner/handler-types.js';
import type { InputPatchOf, StepOutputAt } from '../runner/types.js';
import type { SearchValue } from '../search.js';
import type { Snapshot, TaskState } from '../snapshot.js';

// The harness's types: what its methods take, kept apart from the class that drives instances.

/** Step ids `complete` and `fail` take: a typed definition's task steps and handler maps (any string when untyped). */
export type TaskStepOf<D> = TaskStepIdOf<D>;
/**
 * Step ids whose tasks a snapshot dispatches: those of {@link TaskStepOf} and the steps that start
 * workflows (whose tasks stand for their children; `compensate` completes their own compensation).
 */
export type DispatchingStepOf<D> = (keyof TaskOutputsOf<D> & string) | (ChildStepsOf<D>['step'] & string);

/** What `output(stepId)` returns: the step's output as stored, undefined until it completes. */
export type OutputRead<D, K> = StepOutputAt<D, K> | undefined;
/**
 * What `child` takes: a step that starts child workflows, or a child's instance id (default ids
 * hold a `/`; cast one of your own that does not). Any string for an untyped definition.
 */
export type ChildRef<D> = ChildStepsOf<D>['step'] | `${string}/${string}`;
// Per definition (distributed): the typed ones registered under `Name`.
type NamedIn<W, Name> = W extends unknown
  ? string extends NameOf<W>
    ? never
    : NameOf<W> extends Name
      ? W
      : never
  : never;
type StartedBy<D, K> = Extract<ChildStepsOf<D>, { step: K }>['workflow'];
/**
 * The definition among the harness's `workflows` that step `K` starts: its child harness is typed
 * by it (any definition when that is not known).
 */
export type ChildDefinitionOf<D, W extends readonly AnyDefinition[], K> =
  string extends StartedBy<D, K>
    ? AnyDefinition
    : [NamedIn<W[number], StartedBy<D, K>>] extends [never]
      ? AnyDefinition
      : Extract<NamedIn<W[number], StartedBy<D, K>>, AnyDefinition>;

/** How a result is reported for one attempt: which attempt, of which phase, or by idempotency key. */
export type ReportOptions = {
  attempt?: number;
  phase?: 'run' | 'compensate';
  key?: string;
  /** A map step's item. */
  item?: number | undefined;
  /** `complete`: search attributes the handler set, as `ctx.setAttributes` sends them (`null` clears one). */
  search?: Record<string, SearchValue | null> | undefined;
};
/** What `complete(stepId, output)` takes as the output: what a task of that step reports (a map's: one item's), as stored. */
export type ReportedOutput<D, K> = K extends keyof TaskOutputsOf<D> ? TaskOutputsOf<D>[K] : unknown;
/**
 * What `signal(name, …)` takes after the name: its data, required unless it may be undefined
 * (as the typed client asks), and a deduplication id.
 */
export type SignalArgs<D, K extends keyof SignalsOf<D>> = undefined extends SignalsOf<D>[K]
  ? [data?: SignalsOf<D>[K], id?: string]
  : [data: SignalsOf<D>[K], id?: string];
/** `start`'s options: the run's priority (0 to 1000, higher first; needs `flowControl`), over its workflow's. */
export interface HarnessStartOptions {
  priority?: number | undefined;
}
/** `start`'s arguments: the declared input (optional when it may be undefined, or when none is declared), then options. */
export type StartArgs<D> =
  undefined extends InputOf<D>
    ? [input?: InputOf<D>, options?: HarnessStartOptions]
    : [input: InputOf<D>, options?: HarnessStartOptions];
/**
 * What `requeue` takes: a step that dispatches tasks, and a shallow patch of the workflow input
 * (typed by a declared object input: the runner's `inputPatch` type, {@link InputPatchOf}).
 */
export type HarnessRequeueOptions<D> = {
  step?: DispatchingStepOf<D> | undefined;
  inputPatch?: InputPatchOf<D> | undefined;
};
/** A step that waits for a signal, and the signal it listens for (typed for a typed definition). */
export interface AwaitedSignal<D = unknown> {
  step: StepIdOf<D>;
  signal: keyof SignalsOf<D> & string;
}

/** A task the snapshot currently asks someone to run, with the input its handler would get. */
export interface DispatchedTask<Step extends string = string, Input = unknown> extends TaskState {
  /** The step the task runs for (a typed definition's step id). */
  step: Step;
  /** What its handler gets: in `runHandlers`, typed by that handler's declared input. */
  input: Input;
  /** How many times the step has been entered in this run. */
  iteration: number;
}

/** One synchronous handler: the task with the input its handler takes, and what it returns. */
type SyncHandlerOf<Spec> = Spec extends { input: infer I; output: infer O }
  ? unknown extends I
    ? (task: DispatchedTask) => unknown
    : (task: DispatchedTask<string, I>) => O
  : (task: DispatchedTask) => unknown;

/**
 * Synchronous handlers for `WorkflowHarness.runHandlers`, by handler name: return an output or
 * throw to fail. For typed definitions (the harness's and its `workflows`) the names are the
 * handlers they use (another name does not compile), each task's `input` is what that handler
 * takes and the return what it returns; untyped, any name, input and output.
 */
export type SyncHandlers<W extends readonly AnyDefinition[] = readonly AnyDefinition[]> = {
  [K in keyof HandlerSpecsFor<W>]?: SyncHandlerOf<HandlerSpecsFor<W>[K]>;
};

/** Options of `createHarness`. */
export interface HarnessOptions<W extends readonly AnyDefinition[] = readonly AnyDefinition[]>
  extends StepOptions {
  /** Instance id (default `test-1`). */
  id?: string;
  /** Fake clock start, epoch ms (default 0). */
  now?: number;
  /**
   * The workflows its child and map steps start (and theirs): given, the harness drives the whole
   * tree, performing each `$child` task as a runner does. Without it such tasks are left to the test.
   */
  workflows?: W;
  /**
   * When child effects are performed: right after the write that asks for them (default), or only
   * when the test says (`effects`, `perform`, `drop`, `settle`), to order them against other events
   * or lose one as a crashed runner would.
   */
  effects?: 'immediate' | 'manual';
  /**
   * Resume this stored snapshot (say, one a migration moved to this definition) instead of
   * starting: the id and clock default to its own; `replayed()` replays from it.
   */
  from?: Snapshot | undefined;
}

/** A chunk a handler the harness ran wrote to `ctx.stream`: its task's stream key, attempt and data (as JSON). */
export interface StreamedChunk {
  step: string;
  attempt: number;
  data: unknown;
}
