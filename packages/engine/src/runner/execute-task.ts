import { declaredSchemas, schemaIssues } from '../definition/declared-schemas.js';
import type { WorkflowDefinition } from '../definition/schema.js';
import { failureOf, ValidationError } from '../errors.js';
import type { WorkflowEvent } from '../events.js';
import { kindNotLoaded } from '../reducer/kind-table.js';
import { detailsFor } from '../reducer/task-heartbeat.js';
import { taskInput } from '../reducer/task-view.js';
import { dataView } from '../reducer/transition-context.js';
import type { ErrorInfo, ScheduledFor, Snapshot, TaskState } from '../snapshot.js';
import type { Store } from '../store/store.js';
import type { StreamAttempt } from '../store/stream.js';
import { type CallbackOptions, type CallbackPort, noCallbacks } from './callback-port.js';
import type { Handler, HandlerContext } from './handler-types.js';
import type { InFlight } from './in-flight.js';
import type { TaskOutcome } from './instrumentation.js';
import { TaskAbort } from './task-abort.js';
import { attemptStreamOf, type HandlerStream, noStream, streamStepOf } from './task-stream.js';

/** What a handler's context reaches beyond its task: the runner's clock, callback tokens and store (its stream). */
interface TaskTools {
  clock: () => number;
  callbacks: CallbackPort | undefined;
  store: Store;
}

/** The event of one handler run's result, its time filled in when it is written. */
export type ResultEvent = (at: number) => WorkflowEvent;

/** The result of one handler run: how it ended (as an instrumentation is told), and the event to write. */
export type TaskResult = TaskOutcome & { event: ResultEvent };

/** One handler run: the handler, the task as dispatched, and the definition and snapshot that dispatched it. */
export interface TaskRun {
  handler: Handler;
  definition: WorkflowDefinition;
  snapshot: Snapshot;
  task: TaskState;
  /** `ctx.heartbeat`, from the runner's handler heartbeats; none: it throws INVALID_OPTIONS. */
  heartbeat?: ((details?: unknown) => void) | undefined;
}

/** `ctx.heartbeat` of a runner without handler heartbeats. */
function noHeartbeats(): never {
  throw new ValidationError('INVALID_OPTIONS', 'ctx.heartbeat needs handler heartbeats', [
    { path: 'heartbeats', message: 'pass createRunner({ heartbeats: handlerHeartbeats })' },
  ]);
}

/** Runs one handler attempt; resolves with how it ended and its result event (it does not reject for the handler's error). */
export type RunTask = (run: TaskRun) => Promise<TaskResult>;

/**
 * The context a handler is called with, from the snapshot that dispatched its task. A class with
 * `outputs`, `signal`, `heartbeat` and `stream` as getters on its prototype, computed when read (most
 * handlers read none): an object literal with getters took a map of its own per task, about 1 KB each.
 */
class TaskContext implements HandlerContext {
  // Declared, not defined: the constructor sets each once (no field initialisers to run first).
  declare input: unknown;
  declare workflowInput: unknown;
  declare instanceId: string;
  declare step: string;
  declare phase: 'run' | 'compensate';
  declare attempt: number;
  declare idempotencyKey: string;
  declare iteration: number;
  declare schedule: ScheduledFor | undefined;
  declare heartbeatDetails: unknown;
  readonly #snapshot: Snapshot;
  readonly #task: TaskState;
  readonly #abort: TaskAbort;
  readonly #beat: ((details?: unknown) => void) | undefined;
  #stream: StreamAttempt | undefined;
  readonly #definition: WorkflowDefinition;
  readonly #tools: TaskTools;
  #outputs: Record<string, unknown> | undefined;

  constructor(
    definition: WorkflowDefinition,
    s: Snapshot,
    task: TaskState,
    abort: TaskAbort,
    beat: ((details?: unknown) => void) | undefined,
    stream: StreamAttempt | undefined,
    tools: TaskTools,
  ) {
    this.input = taskInput(definition, s, task);
    this.workflowInput = s.input;
    this.instanceId = s.id;
    this.step = task.step;
    this.phase = task.phase;
    this.attempt = task.attempt;
    this.idempotencyKey = task.idempotencyKey;
    this.iteration = s.steps[task.step]?.iteration ?? 1;
    this.schedule = s.schedule;
    this.heartbeatDetails = detailsFor(s.steps, task);
    this.#snapshot = s;
    this.#task = task;
    this.#abort = abort;
    this.#beat = beat;
    this.#stream = stream;
    this.#definition = definition;
    this.#tools = tools;
  }

  callback(signal: string, options: CallbackOptions = {}): Promise<string> {
    const { callbacks, clock } = this.#tools;
    if (!callbacks) return Promise.reject(noCallbacks('ctx.callback'));
    return callbacks.issue(this.#definition, this.#snapshot, signal, options, clock());
  }

  // Search attributes' task wrapper (`searchAttributes`) puts its own on each context it runs.
  setAttributes(): void {
    throw kindNotLoaded('search');
  }

  get outputs(): Record<string, unknown> {
    this.#outputs ??= dataView(this.#snapshot).outputs;
    return this.#outputs;
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  // The task's own function (a handler may take it out of the context), or one that refuses.
  get heartbeat(): (details?: unknown) => void {
    return this.#beat ?? noHeartbeats;
  }

  // A first attempt's side of the stream is made when the handler first reads it (most never do);
  // a retry's was made with the context, since it begins at once.
  get stream(): HandlerStream {
    this.#stream ??= attemptStreamOf(this.#tools.store, this.#snapshot, this.#task);
    return this.#stream ?? noStream(this.instanceId, streamStepOf(this.#task));
  }

  /** The attempt's side of the stream, if it was made (for the runner to close after the handler). */
  static streamOf(ctx: TaskContext): StreamAttempt | undefined {
    return ctx.#stream;
  }
}

/** The event that reports `task`'s run, of `type`, with `more` (its output or its error; nothing for a give-back). */
export function resultEvent(
  type: 'task.completed' | 'task.failed' | 'task.released',
  task: Readonly<TaskState>,
  more: { output: unknown } | { error: ErrorInfo } | Record<string, never>,
): ResultEvent {
  const { step, attempt, phase, idempotencyKey: key, item } = task;
  // Built by assignment, not spreads: this runs for every handler result. The commonest (an
  // output, no map item) is one literal: a key added after one leaves room for three more.
  if (item === undefined && 'output' in more) {
    const { output } = more;
    return (at) => ({ type, at, step, attempt, phase, key, output }) as unknown as WorkflowEvent;
  }
  return (at) => {
    const e: Record<string, unknown> = { type, at, step, attempt, phase, key };
    if (item !== undefined) e['item'] = item;
    if ('output' in more) e['output'] = more.output;
    else if ('error' in more) e['error'] = more.error;
    return e as unknown as WorkflowEvent;
  };
}

/**
 * The runner's {@link RunTask}: calls the handler with the context the dispatching snapshot
 * implies (its AbortSignal kept in `inFlight`, its deadline read from `clock`) and turns what it
 * returns or throws into the result event: the output JSON round-tripped (and checked against the
 * step's declared schema), or the failure as {@link failureOf} records it. What the handler wrote
 * to `ctx.stream` is stored before this resolves.
 */
export function taskRunner(
  clock: () => number,
  inFlight: InFlight,
  store: Store,
  callbacks?: CallbackPort,
): RunTask {
  const tools: TaskTools = { clock, callbacks, store };
  return async ({ handler, definition, snapshot: s, task, heartbeat }) => {
    const abort = new TaskAbort(task, clock);
    // The run is recorded in `inFlight` (where a write that takes its task away aborts it) only
    // before it first waits: nothing else runs while the handler runs synchronously, so a handler
    // that answers at once (most) was never seen there, and recording it cost a map entry per task.
    let recorded = false;
    // A retry begins its stream at once (see `StreamStore.attempt`); a first attempt when it writes.
    const ctx = new TaskContext(
      definition,
      s,
      task,
      abort,
      heartbeat,
      task.attempt > 1 ? attemptStreamOf(store, s, task) : undefined,
      tools,
    );
    let output: unknown;
    try {
      output = handler(ctx);
      // A handler that answers at once is not awaited: a promise and a turn fewer per task.
      if (typeof (output as PromiseLike<unknown> | null)?.then === 'function') {
        recorded = true;
        inFlight.start(s.id, abort);
        output = await output;
      }
    } catch (e) {
      const stream = TaskContext.streamOf(ctx);
      if (stream?.used) {
        if (!recorded) inFlight.start(s.id, abort);
        recorded = true;
        await stream.close();
      }
      const error = failureOf(e);
      return { outcome: 'failed', error, cause: e, event: resultEvent('task.failed', task, { error }) };
    } finally {
      abort.dispose();
      if (recorded) inFlight.end(s.id, abort);
    }
    // Its chunks are stored before its result is written: a reader that sees the result has them.
    const stream = TaskContext.streamOf(ctx);
    if (stream?.used) await stream.close();
    const json = output === undefined || output === null ? null : JSON.parse(JSON.stringify(output));
    const schema = task.phase === 'run' ? declaredSchemas(definition)?.outputs[task.step] : undefined;
    const issues = schema ? await schemaIssues(schema, json, `outputs.${task.step}`) : undefined;
    if (issues?.length) {
      // Retrying the same handler would return the same shape: the failure policy decides at once.
      const message = `output of ${task.step} does not match its declared schema: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`;
      const error: ErrorInfo = { message, code: 'INVALID_OUTPUT', retryable: false };
      return { outcome: 'failed', error, event: resultEvent('task.failed', task, { error }) };
    }
    return { outcome: 'completed', event: resultEvent('task.completed', task, { output: json }) };
  };
}
