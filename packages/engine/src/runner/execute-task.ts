import { declaredSchemas, schemaIssues } from '../definition/declared-schemas.js';
import type { WorkflowDefinition } from '../definition/schema.js';
import { failureOf } from '../errors.js';
import type { WorkflowEvent } from '../events.js';
import { taskView } from '../reducer/task-view.js';
import { taskKey } from '../reducer/transition-context.js';
import type { ErrorInfo, Snapshot, TaskState } from '../snapshot.js';
import type { Handler } from './handler-types.js';
import type { InFlight } from './in-flight.js';
import type { TaskOutcome } from './instrumentation.js';
import type { PayloadPort } from './payload-port.js';
import { TaskAbort } from './task-abort.js';

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
}

/** Runs one handler attempt; resolves with how it ended and its result event (it does not reject for the handler's error). */
export type RunTask = (run: TaskRun) => Promise<TaskResult>;

/**
 * The runner's {@link RunTask}: calls the handler with the context the dispatching snapshot
 * implies (its AbortSignal kept in `inFlight`, its deadline read from `clock`) and turns what it
 * returns or throws into the result event: the output JSON round-tripped (and checked against the
 * step's declared schema), or the failure as {@link failureOf} records it.
 *
 * With `payloads`, the handler sees resolved values (the references in the snapshot's input and
 * step outputs fetched first) and an output over the threshold is offloaded before it is written.
 * Either failing (`PAYLOAD_NOT_FOUND`, an unreachable payload store, `PAYLOAD_TOO_LARGE`) fails the
 * attempt with that error: retried if it is retryable, as the step's policy says.
 */
export function taskRunner(clock: () => number, inFlight: InFlight, payloads?: PayloadPort): RunTask {
  return async (run) => {
    if (!payloads) return attempt(run, run.snapshot);
    let data: Snapshot;
    try {
      data = await payloads.resolveData(run.snapshot);
    } catch (e) {
      return failed(run.task, e);
    }
    const r = await attempt(run, data);
    if (r.outcome !== 'completed' || r.output === undefined) return r;
    try {
      const stored = await payloads.offload(run.snapshot.id, r.output, keepOf(run.definition, run.task.step));
      return stored === r.output ? r : completed(run.task, stored);
    } catch (e) {
      return failed(run.task, e);
    }
  };

  /** One attempt, its handler's view read from `data` (the snapshot, or its resolved copy). */
  async function attempt(
    { handler, definition, snapshot: s, task }: TaskRun,
    data: Snapshot,
  ): Promise<Attempt> {
    const view = taskView(definition, data, task);
    const abort = new TaskAbort(() => task.deadline - clock());
    const release = inFlight.start(s.id, taskKey(task.step, task.phase, task.item), task.attempt, abort);
    let output: unknown;
    try {
      output = await handler({
        input: view.input,
        workflowInput: data.input,
        get outputs() {
          return view.outputs;
        },
        instanceId: s.id,
        step: task.step,
        phase: task.phase,
        attempt: task.attempt,
        idempotencyKey: task.idempotencyKey,
        iteration: view.iteration,
        get signal() {
          return abort.signal;
        },
      });
    } catch (e) {
      return failed(task, e);
    } finally {
      abort.dispose();
      release();
    }
    const json = output === undefined ? null : JSON.parse(JSON.stringify(output));
    const schema = task.phase === 'run' ? declaredSchemas(definition)?.outputs[task.step] : undefined;
    const issues = schema ? await schemaIssues(schema, json, `outputs.${task.step}`) : [];
    if (issues.length) {
      // Retrying the same handler would return the same shape: the failure policy decides at once.
      const message = `output of ${task.step} does not match its declared schema: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`;
      const error: ErrorInfo = { message, code: 'INVALID_OUTPUT', retryable: false };
      return {
        outcome: 'failed',
        error,
        event: (at) => ({ type: 'task.failed', at, ...resultOf(task), error }),
      };
    }
    return { ...completed(task, json), output: json };
  }
}

/** A completed attempt, with the output as written (kept for offloading). */
type Attempt = TaskResult & { output?: unknown };

/** The fields every result event of `task` carries. */
function resultOf(task: TaskState) {
  return {
    step: task.step,
    attempt: task.attempt,
    phase: task.phase,
    key: task.idempotencyKey,
    ...(task.item === undefined ? {} : { item: task.item }),
  };
}

function completed(task: TaskState, output: unknown): TaskResult {
  return { outcome: 'completed', event: (at) => ({ type: 'task.completed', at, ...resultOf(task), output }) };
}

function failed(task: TaskState, e: unknown): TaskResult {
  const error = failureOf(e);
  return {
    outcome: 'failed',
    error,
    cause: e,
    event: (at) => ({ type: 'task.failed', at, ...resultOf(task), error }),
  };
}

/** The top-level output fields a step keeps inline when its output is offloaded (`offload.keep`); false: never offloaded. */
function keepOf(definition: WorkflowDefinition, step: string): readonly string[] | false | undefined {
  const o = (definition.steps[step] as { offload?: { keep?: string[] } | false } | undefined)?.offload;
  return o === false ? false : o?.keep;
}
