import { compileWorkflow } from '../definition/compile.js';
import type { DefinitionInput } from '../definition/schema.js';
import { failureOf } from '../errors.js';
import { kindNotLoaded } from '../reducer/kind-table.js';
import type { SearchRules } from '../reducer/kinds/step-rules.js';
import { detailsFor } from '../reducer/task-heartbeat.js';
import { taskView } from '../reducer/task-view.js';
import { noCallbacks } from '../runner/callback-port.js';
import type { AnyDefinition, Handler } from '../runner/handler-types.js';
import { type HandlerStream, streamStepOf } from '../runner/task-stream.js';
import type { SearchValue } from '../search.js';
import { CHILD_HANDLER, isTerminal, type Snapshot, type TaskState } from '../snapshot.js';
import type { ReportOptions, StreamedChunk, SyncHandlers } from './harness-types.js';

// The harness's drivers: run handlers on the tasks of every instance of a tree, as a runner would,
// reporting each outcome with the attempt and key of the task it ran. They use only what a harness
// shows the test, typed here by shape so this module and the class do not import each other.

/** What the drivers need of a harness. */
export interface Driven {
  readonly id: string;
  readonly definition: AnyDefinition;
  readonly snapshot: Snapshot;
  readonly tree: Driven[];
  readonly streamed: StreamedChunk[];
  complete(stepId: string, output?: unknown, o?: ReportOptions): boolean;
  fail(stepId: string, error: { message: string }, o?: ReportOptions): boolean;
  heartbeat(stepId: string, details?: unknown, o?: ReportOptions): boolean;
  awaitingSignal(): unknown[];
  advanceToWake(): boolean;
  settle(): unknown;
}

/** The first task of the tree that `has` a handler for, with its instance: not detached, not a child's. */
function nextTask(
  root: Driven,
  has: (handler: string) => boolean,
): { h: Driven; task: TaskState } | undefined {
  for (const h of root.tree) {
    const task = Object.values(h.snapshot.tasks).find(
      (t) => t.handler !== CHILD_HANDLER && has(t.handler) && !t.detached,
    );
    if (task) return { h, task };
  }
  return undefined;
}

/** Reports a handler's outcome for `task` of `h`, as the runner records it (a throw's code, retryable). */
function report(
  h: Driven,
  task: TaskState,
  outcome: { output: unknown; search?: Record<string, SearchValue | null> | undefined } | { error: unknown },
): void {
  const o = { phase: task.phase, attempt: task.attempt, key: task.idempotencyKey, item: task.item };
  if ('error' in outcome) h.fail(task.step, failureOf(outcome.error), o);
  else h.complete(task.step, outcome.output, outcome.search ? { ...o, search: outcome.search } : o);
}

/** `runHandlers`: synchronous handlers over the tree until none covers a task; timers stay put. */
export function runTreeSync(root: Driven, handlers: SyncHandlers, maxRounds: number): void {
  for (let round = 0; round < maxRounds; round++) {
    root.settle();
    const next = nextTask(root, (name) => handlers[name] !== undefined);
    if (!next) return;
    const { h, task } = next;
    const { input, iteration } = taskView(h.definition, h.snapshot, task);
    let output: unknown;
    try {
      output = handlers[task.handler]!({ ...task, input, iteration });
    } catch (e) {
      report(h, task, { error: e });
      continue;
    }
    report(h, task, { output });
  }
  throw new Error('harness: handlers did not settle');
}

/** `run`: the real handlers over the tree, with the fake clock advanced as `timers` says. */
export async function runTree(
  root: Driven,
  table: Record<string, Handler | undefined>,
  options: {
    timers?: 'advance' | 'until-signal' | 'stop' | undefined;
    maxRounds?: number | undefined;
    /** The rules `ctx.setAttributes` checks with (`searchAttributes` in the harness's kinds). */
    search?: SearchRules | undefined;
  },
): Promise<void> {
  const max = options.maxRounds ?? 10_000;
  for (let round = 0; round < max; round++) {
    root.settle();
    const next = nextTask(root, (name) => table[name] !== undefined);
    if (!next) {
      if (root.tree.every((h) => isTerminal(h.snapshot.status))) return;
      if (options.timers === 'until-signal' && root.tree.some((h) => h.awaitingSignal().length)) return;
      if (options.timers === undefined || options.timers === 'stop' || !root.advanceToWake()) return;
      continue;
    }
    const { h, task } = next;
    const view = taskView(h.definition, h.snapshot, task);
    let output: unknown;
    let search: Record<string, SearchValue | null> | undefined;
    try {
      output = await table[task.handler]!({
        input: view.input,
        workflowInput: h.snapshot.input,
        outputs: view.outputs,
        instanceId: h.id,
        step: task.step,
        phase: task.phase,
        attempt: task.attempt,
        idempotencyKey: task.idempotencyKey,
        iteration: view.iteration,
        signal: new AbortController().signal,
        schedule: h.snapshot.schedule,
        // Written at once, at the fake clock's time (a runner batches them).
        heartbeat: (details?: unknown) => {
          const { phase, attempt, idempotencyKey: key, item } = task;
          h.heartbeat(task.step, details, { phase, attempt, key, item });
        },
        heartbeatDetails: detailsFor(h.snapshot.steps, task),
        callback: () =>
          Promise.reject(
            noCallbacks(
              'ctx.callback',
              'the harness issues none: test callbacks with createRunner({ callbacks })',
            ),
          ),
        stream: harnessStream(h, task),
        setAttributes: (values) => {
          const rules = options.search;
          // As a runner's context without `searchAttributes` (whose definitions declare none).
          if (!rules) throw kindNotLoaded('search');
          search = {
            ...search,
            ...rules.set(compileWorkflow(h.definition as DefinitionInput).definition, values),
          };
        },
      });
    } catch (e) {
      report(h, task, { error: e });
      continue;
    }
    // Stored as JSON, as a runner stores it.
    report(h, task, {
      output: output === undefined ? undefined : JSON.parse(JSON.stringify(output)),
      search,
    });
  }
  throw new Error('harness: handlers did not settle');
}

/** `ctx.stream` in the harness: each chunk, as JSON, goes straight to the harness's `streamed`. */
function harnessStream(h: Driven, task: TaskState): HandlerStream {
  const step = streamStepOf(task);
  return {
    write(chunk) {
      const data = chunk === undefined ? null : JSON.parse(JSON.stringify(chunk));
      h.streamed.push({ step, attempt: task.attempt, data });
    },
    flush: () => Promise.resolve(),
  };
}
