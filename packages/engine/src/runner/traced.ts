// Tracing, applied once: each function here wraps one of the runner's raw operations (an event's
// write, a create, a handler attempt) in the matching around-hook of an `Instrumentation`, with the
// same signature, so the runner picks the wrapped or the raw one when it is made and never asks again.
// They arrive with the value `defineInstrumentation` makes, so a runner without tracing ships none.

import { ValidationError } from '../errors.js';
import type { Snapshot } from '../snapshot.js';
import type { RunTask, TaskResult } from './execute-task.js';
import type { EventInfo, Instrumentation, TaskInfo } from './instrumentation.js';
import type { WorkflowRegistry } from './registry.js';
import type { BasedWrite, Create, OnWrite, WriteBase } from './write-request.js';

/** Runs `work` (one event's write) inside the instrumentation's wrapper, telling it what was written. */
async function around(
  ins: Instrumentation,
  info: EventInfo,
  onWrite: OnWrite,
  work: (onWrite: OnWrite) => Promise<Snapshot>,
): Promise<Snapshot> {
  let before: number | undefined;
  const out = await ins.event(info, async () => {
    const snapshot = await work((s, transitions, from, dueAt) => {
      before = from;
      onWrite(s, transitions, from, dueAt);
    });
    return { snapshot, applied: before !== undefined, versionBefore: before ?? snapshot.version };
  });
  return out.snapshot;
}

/** `write` inside the event wrapper; a write with no base loads it first, so the wrapper is told the workflow, version and trace. */
function tracedWrite(
  ins: Instrumentation,
  load: (id: string) => Promise<Snapshot>,
  write: BasedWrite,
): BasedWrite {
  return async (request, given) => {
    const base: WriteBase = given ?? { snapshot: await load(request.id), origin: 'store' };
    const { snapshot } = base;
    const info: EventInfo = {
      instanceId: request.id,
      type: request.event(0).type, // the event varies with the time only: made once more for its type
      workflow: snapshot.workflow,
      version: snapshot.version,
      trace: snapshot.trace,
    };
    return around(ins, info, request.onWrite, (onWrite) => write({ ...request, onWrite }, base));
  };
}

/**
 * `create` inside the event wrapper, the start event carrying the trace that wrapper made active. A
 * child's start is told its parent's trace and step, so its span joins that trace and the child's
 * own spans nest under it (one trace for the tree, a branch per child).
 */
function tracedCreate(ins: Instrumentation, registry: WorkflowRegistry, create: Create): Create {
  return async (request) => {
    const { instance, trace, parent } = request;
    const workflow = registry.resolve(instance.workflow, instance.version);
    const info: EventInfo = {
      instanceId: instance.id,
      type: 'start',
      workflow,
      version: 0,
      ...(trace ? { trace } : {}),
      ...(parent ? { parent } : {}),
    };
    // Asked inside the wrapper: a span it made active is the trace the instance carries.
    return around(ins, info, request.onWrite, (onWrite) =>
      create({ ...request, onWrite, trace: ins.carrier() ?? trace }),
    );
  };
}

/** `runTask` inside the task wrapper: the handler runs in its callback, so a context it sets is active there. */
function tracedTask(ins: Instrumentation, runTask: RunTask): RunTask {
  return (run) => {
    const { snapshot: s, task } = run;
    const info: TaskInfo = { ...task, instanceId: s.id, workflow: s.workflow, trace: s.trace };
    // The wrapper hands back what `run` resolved with, which is the whole result.
    return ins.task(info, () => runTask(run)) as Promise<TaskResult>;
  };
}

/** The runner's operations wrapped in an instrumentation's around-hooks (what {@link defineInstrumentation} adds). */
export interface TracedOperations {
  /** An event's write inside `event`; `load` reads the instance when the write has no base. */
  write(load: (id: string) => Promise<Snapshot>, write: BasedWrite): BasedWrite;
  /** A create inside `event`, its start carrying the trace that wrapper made active. */
  create(registry: WorkflowRegistry, create: Create): Create;
  /** A handler attempt inside `task`. */
  task(runTask: RunTask): RunTask;
}

/** An {@link Instrumentation} a runner can take (`createRunner({ instrument })`): what {@link defineInstrumentation} returns. */
export interface RunnerInstrumentation extends Instrumentation {
  /** How the runner wraps its operations in these hooks. */
  readonly traced: TracedOperations;
}

/**
 * Makes a runner's `instrument` option of your own {@link Instrumentation} (the around-hooks), with
 * the code that wraps the runner's writes and handler attempts in them: a runner without tracing
 * ships none of it. `@stepfold/otel`'s `createOtelInstrumentation` returns one already.
 *
 * @example
 * const instrument = defineInstrumentation({
 *   carrier: () => undefined,
 *   event: (info, write) => write(),
 *   task: (info, run) => run(),
 * });
 * const runner = createRunner({ store, workflows: [order], handlers, instrument });
 */
export function defineInstrumentation(hooks: Instrumentation): RunnerInstrumentation {
  if (
    ['carrier', 'event', 'task'].some(
      (m) => typeof (hooks as unknown as Record<string, unknown>)?.[m] !== 'function',
    )
  )
    throw new ValidationError('INVALID_OPTIONS', 'invalid instrumentation', [
      {
        path: '',
        message: 'an instrumentation has carrier(), event(info, write) and task(info, run) methods',
      },
    ]);
  const own: Instrumentation = {
    carrier: () => hooks.carrier(),
    event: (info, write) => hooks.event(info, write),
    task: (info, run) => hooks.task(info, run),
  };
  return {
    ...own,
    traced: {
      write: (load, write) => tracedWrite(own, load, write),
      create: (registry, create) => tracedCreate(own, registry, create),
      task: (runTask) => tracedTask(own, runTask),
    },
  };
}
