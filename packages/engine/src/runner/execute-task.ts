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
 */
export function taskRunner(clock: () => number, inFlight: InFlight): RunTask {
  return async ({ handler, definition, snapshot: s, task }) => {
    const view = taskView(definition, s, task);
    const abort = new TaskAbort(() => task.deadline - clock());
    const release = inFlight.start(s.id, taskKey(task.step, task.phase, task.item), task.attempt, abort);
    const result = {
      step: task.step,
      attempt: task.attempt,
      phase: task.phase,
      key: task.idempotencyKey,
      ...(task.item === undefined ? {} : { item: task.item }),
    };
    let output: unknown;
    try {
      output = await handler({
        input: view.input,
        workflowInput: s.input,
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
      const error = failureOf(e);
      return {
        outcome: 'failed',
        error,
        cause: e,
        event: (at) => ({ type: 'task.failed', at, ...result, error }),
      };
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
      return { outcome: 'failed', error, event: (at) => ({ type: 'task.failed', at, ...result, error }) };
    }
    return { outcome: 'completed', event: (at) => ({ type: 'task.completed', at, ...result, output: json }) };
  };
}
