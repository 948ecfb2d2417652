import { declaredSchemas, schemaIssues } from '../definition/declared-schemas.js';
import type { WorkflowDefinition } from '../definition/schema.js';
import { failureOf } from '../errors.js';
import type { WorkflowEvent } from '../events.js';
import { taskView } from '../reducer/task-view.js';
import { taskKey } from '../reducer/transition-context.js';
import type { ErrorInfo, Snapshot, TaskState } from '../snapshot.js';
import type { Handler } from './handler-types.js';
import type { InFlight } from './in-flight.js';
import type { Instrumentation, TaskInfo, TaskOutcome } from './instrumentation.js';
import { TaskAbort } from './task-abort.js';

/** The event of one handler run's result, its time filled in when it is written. */
export type ResultEvent = (at: number) => WorkflowEvent;

/** The result of one handler run: how it ended (as an instrumentation is told), and the event to write. */
export type TaskResult = TaskOutcome & { event: ResultEvent };

/**
 * Runs the handler of a dispatched task with the context the dispatching snapshot implies and
 * turns what it returns or throws into the result event: the output JSON round-tripped (and
 * checked against the step's declared schema), or the failure as {@link failureOf} records it.
 */
export function executeTask(
  handler: Handler,
  definition: WorkflowDefinition,
  s: Snapshot,
  task: TaskState,
  clock: () => number,
  inFlight: InFlight,
  instrument?: Instrumentation,
): Promise<TaskResult> {
  // Not async itself: without an instrument, the attempt's own promise is the one returned.
  if (!instrument) return attempt(handler, definition, s, task, clock, inFlight);
  const info: TaskInfo = { ...task, instanceId: s.id, workflow: s.workflow, trace: s.trace };
  // The handler runs inside the wrapper's callback: a context the wrapper sets is active in it. The
  // wrapper hands back what `run` resolved with, which is the whole result.
  return instrument.task(info, () =>
    attempt(handler, definition, s, task, clock, inFlight),
  ) as Promise<TaskResult>;
}

/** One handler attempt: {@link executeTask} without instrumentation. */
async function attempt(
  handler: Handler,
  definition: WorkflowDefinition,
  s: Snapshot,
  task: TaskState,
  clock: () => number,
  inFlight: InFlight,
): Promise<TaskResult> {
  const view = taskView(definition, s, task);
  const abort = new TaskAbort(() => task.deadline - clock());
  const release = inFlight.start(s.id, taskKey(task.step, task.phase), task.attempt, abort);
  const result = { step: task.step, attempt: task.attempt, phase: task.phase, key: task.idempotencyKey };
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
}
