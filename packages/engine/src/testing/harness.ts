import { compileWorkflow } from '../definition/compile.js';
import { kindOf } from '../definition/kinds/index.js';
import type { SignalsOf, StepOutputsOf } from '../definition/typed-definition.js';
import { failureOf } from '../errors.js';
import type { WorkflowEvent } from '../events.js';
import { replay, type StepOptions, step } from '../reducer/reducer.js';
import { taskView } from '../reducer/task-view.js';
import { taskKey } from '../reducer/transition-context.js';
import type { AnyDefinition, Handler, HandlersFor } from '../runner/handler-types.js';
import { type ErrorInfo, isTerminal, type Snapshot, type Status, type TaskState } from '../snapshot.js';

/** Step ids a result may be reported for: a typed definition's steps with an output (any string when untyped). */
type TaskStepOf<D> = keyof StepOutputsOf<D> & string;
/** How a result is reported for one attempt: which attempt, of which phase, or by idempotency key. */
type ReportOptions = { attempt?: number; phase?: 'run' | 'compensate'; key?: string };
// Unions of argument lists rather than generic methods, so a harness of a typed definition still
// passes where a `WorkflowHarness` is asked for (method parameters compare both ways).
/** `complete`'s arguments: a step id and that step's output (typed for a typed definition). */
type CompleteArgs<D> = {
  [K in TaskStepOf<D>]: [stepId: K, output?: StepOutputsOf<D>[K] | undefined, o?: ReportOptions];
}[TaskStepOf<D>];
/** `signal`'s arguments: a signal name and its payload (typed for a typed definition). */
type SignalArgs<D> = {
  [K in keyof SignalsOf<D> & string]: [name: K, payload?: SignalsOf<D>[K], id?: string];
}[keyof SignalsOf<D> & string];

/** An event whose `at` may be left to the fake clock. */
export type EventInput = WorkflowEvent extends infer E
  ? E extends { at: number }
    ? Omit<E, 'at'> & { at?: number }
    : never
  : never;

/** A task the snapshot currently asks someone to run, with the input its handler would get. */
export interface DispatchedTask<Step extends string = string> extends TaskState {
  /** The step the task runs for (a typed definition's step id). */
  step: Step;
  input: unknown;
  /** How many times the step has been entered in this run. */
  iteration: number;
}

/** Synchronous handlers for {@link WorkflowHarness.runHandlers}: return an output or throw to fail. */
export type SyncHandlers = Record<string, (task: DispatchedTask) => unknown>;

/** Options of {@link createHarness}. */
export interface HarnessOptions extends StepOptions {
  /** Instance id (default `test-1`). */
  id?: string;
  /** Fake clock start, epoch ms (default 0). */
  now?: number;
}

/**
 * Drives one workflow instance through the pure reducer with a fake clock: no store, no
 * promises. Records every accepted event so a test can check that replay reproduces the state.
 */
export class WorkflowHarness<D extends AnyDefinition = AnyDefinition> {
  /** Current fake time, epoch ms. */
  now: number;
  readonly id: string;
  private current: Snapshot | null = null;
  /** Events that changed the snapshot, in order. */
  readonly events: WorkflowEvent[] = [];

  constructor(
    readonly definition: D,
    private readonly options: HarnessOptions = {},
  ) {
    this.now = options.now ?? 0;
    this.id = options.id ?? 'test-1';
  }

  /** This harness with string step ids, for results of tasks the snapshot itself dispatched. */
  private get untyped(): WorkflowHarness {
    return this as unknown as WorkflowHarness;
  }

  /** The snapshot; throws before `start`. */
  get snapshot(): Snapshot {
    if (!this.current) throw new Error('harness: start the workflow first');
    return this.current;
  }

  /** The instance status. */
  get status(): Status {
    return this.snapshot.status;
  }

  /** Applies any event (its `at` defaults to the fake clock); returns whether the snapshot changed. */
  send(event: EventInput): boolean {
    const full = { ...event, at: event.at ?? this.now } as WorkflowEvent;
    const next = step(this.definition, this.current, full, this.options);
    if (next === this.current) return false;
    this.current = next;
    this.events.push(full);
    return true;
  }

  /** Starts the instance with `input`. */
  start(input?: unknown): this {
    this.send({ type: 'start', id: this.id, input });
    return this;
  }

  /** In-flight tasks that are not detached, optionally only those of one step. */
  dispatched(stepId?: TaskStepOf<D>): DispatchedTask<TaskStepOf<D>>[] {
    return Object.values(this.snapshot.tasks)
      .filter((t) => !t.detached && (stepId === undefined || t.step === stepId))
      .map((t) => {
        const { input, iteration } = taskView(this.definition, this.snapshot, t);
        return { ...t, step: t.step as TaskStepOf<D>, input, iteration };
      });
  }

  private task(stepId: string, phase: 'run' | 'compensate'): TaskState {
    const t = this.snapshot.tasks[taskKey(stepId, phase)];
    if (!t) throw new Error(`harness: no ${phase} task in flight for step "${stepId}"`);
    return t;
  }

  /**
   * Reports success of the in-flight attempt of `stepId` (or of the given attempt; pass `key`,
   * an idempotency key, to report for a specific execution as a runner does).
   */
  complete(...[stepId, output, o = {}]: CompleteArgs<D>): boolean {
    const phase = o.phase ?? 'run';
    const { attempt, key } = this.target(stepId, phase, o);
    return this.send({ type: 'task.completed', step: stepId, attempt, phase, output, ...key });
  }

  /** Reports failure of the in-flight attempt of `stepId` (or of the given attempt / `key`). */
  fail(
    stepId: TaskStepOf<D>,
    error: string | Omit<ErrorInfo, 'step'> = 'failed',
    o: ReportOptions = {},
  ): boolean {
    const phase = o.phase ?? 'run';
    const { attempt, key } = this.target(stepId, phase, o);
    const err = typeof error === 'string' ? { message: error } : error;
    return this.send({ type: 'task.failed', step: stepId, attempt, phase, error: err, ...key });
  }

  /** The attempt (and, for the in-flight one, the idempotency key) a result is reported for. */
  private target(
    stepId: string,
    phase: 'run' | 'compensate',
    o: { attempt?: number; key?: string },
  ): { attempt: number; key: { key?: string } } {
    if (o.attempt !== undefined)
      return { attempt: o.attempt, key: o.key === undefined ? {} : { key: o.key } };
    const t = this.task(stepId, phase);
    return { attempt: t.attempt, key: { key: o.key ?? t.idempotencyKey } };
  }

  /** Completes the in-flight compensation of `stepId`. */
  compensate(stepId: TaskStepOf<D>): boolean {
    return this.untyped.complete(stepId, undefined, { phase: 'compensate' });
  }

  /** Sends a signal (for a typed definition: a name it declares, with its payload type). */
  signal(...[name, payload, id]: SignalArgs<D>): boolean {
    return this.send({ type: 'signal', name, payload, ...(id === undefined ? {} : { id }) });
  }

  /** Active steps waiting for a signal (human, wait, collect), with the signal each listens for. */
  awaitingSignal(): Array<{ step: string; signal: string }> {
    return this.snapshot.active.flatMap((id) => {
      const def = compileWorkflow(this.definition).definition.steps[id];
      const signal = def ? kindOf(def).listensFor?.(def) : undefined;
      return signal === undefined ? [] : [{ step: id, signal }];
    });
  }

  /** Moves the fake clock forward and ticks; returns whether anything fired. */
  advance(ms: number): boolean {
    this.now += ms;
    return this.send({ type: 'tick' });
  }

  /** Moves the fake clock to the snapshot's `wakeAt` (if any) and ticks. */
  advanceToWake(): boolean {
    const wake = this.snapshot.wakeAt;
    if (wake === null) return false;
    this.now = Math.max(this.now, wake);
    return this.send({ type: 'tick' });
  }

  /** Cancels (compensating back to the start). */
  cancel(reason?: string): boolean {
    return this.send({ type: 'cancel', ...(reason === undefined ? {} : { reason }) });
  }

  /** Aborts at once, without compensation. */
  abort(reason?: string): boolean {
    return this.send({ type: 'abort', ...(reason === undefined ? {} : { reason }) });
  }

  /** Requeues what sits in dlq. */
  requeue(o: { step?: string; inputPatch?: Record<string, unknown> } = {}): boolean {
    return this.send({ type: 'requeue', ...o });
  }

  /** Output of a completed step. */
  output(stepId: string): unknown {
    return this.snapshot.steps[stepId]?.output;
  }

  /**
   * Runs every dispatched task with the given synchronous handlers until none is left that they
   * cover (timers are not advanced). A handler that throws fails the attempt.
   */
  runHandlers(handlers: SyncHandlers, maxRounds = 1000): this {
    for (let round = 0; round < maxRounds; round++) {
      const task = Object.values(this.snapshot.tasks).find((t) => handlers[t.handler] && !t.detached);
      if (!task) return this;
      const { input, iteration } = taskView(this.definition, this.snapshot, task);
      const view = { ...task, input, iteration };
      let output: unknown;
      try {
        output = handlers[task.handler]!(view);
      } catch (e) {
        // Recorded exactly as the runner records a thrown error (code, retryable).
        this.untyped.fail(task.step, failureOf(e), { phase: task.phase });
        continue;
      }
      this.untyped.complete(task.step, output, { phase: task.phase });
    }
    throw new Error('harness: handlers did not settle');
  }

  /**
   * Runs the workflow's real handlers (sync or async, with the full handler context) on every
   * dispatched task they cover, applying their results, until none is left; with
   * `timers: 'advance'` the fake clock then jumps to the next wake time and it goes on, until the
   * instance ends or nothing is due — past a human or wait step's deadline too (its timeout fires).
   * `timers: 'until-signal'` advances the same way but stops once a step waits for a signal, before
   * any of its timeouts fire: send the decision, then run again. A thrown error fails the attempt
   * as the runner records it.
   *
   * @example
   * const h = createHarness(order);
   * await h.start({ sku: 'A' }).run(handlers, { timers: 'advance' });
   * assert.equal(h.status, 'completed');
   */
  async run(
    handlers: Partial<HandlersFor<readonly [D]>>,
    options: { timers?: 'advance' | 'until-signal' | 'stop'; maxRounds?: number } = {},
  ): Promise<this> {
    const table = handlers as Record<string, Handler | undefined>;
    const max = options.maxRounds ?? 10_000;
    for (let round = 0; round < max; round++) {
      if (isTerminal(this.status)) return this;
      const task = Object.values(this.snapshot.tasks).find((t) => table[t.handler] && !t.detached);
      if (!task) {
        if (options.timers === 'until-signal' && this.awaitingSignal().length) return this;
        if (options.timers === undefined || options.timers === 'stop' || !this.advanceToWake()) return this;
        continue;
      }
      const view = taskView(this.definition, this.snapshot, task);
      let output: unknown;
      try {
        output = await table[task.handler]!({
          input: view.input,
          workflowInput: this.snapshot.input,
          outputs: view.outputs,
          instanceId: this.id,
          step: task.step,
          phase: task.phase,
          attempt: task.attempt,
          idempotencyKey: task.idempotencyKey,
          iteration: view.iteration,
          signal: new AbortController().signal,
        });
      } catch (e) {
        this.untyped.fail(task.step, failureOf(e), { phase: task.phase });
        continue;
      }
      this.untyped.complete(
        task.step,
        output === undefined ? undefined : JSON.parse(JSON.stringify(output)),
        {
          phase: task.phase,
        },
      );
    }
    throw new Error('harness: handlers did not settle');
  }

  /** The snapshot rebuilt from the recorded events; equal to `snapshot` when the reducer is deterministic. */
  replayed(): Snapshot | null {
    return replay(this.definition, this.events, this.options);
  }
}

/** Creates a {@link WorkflowHarness} for a definition. */
export function createHarness<const D extends AnyDefinition>(
  definition: D,
  options?: HarnessOptions,
): WorkflowHarness<D> {
  return new WorkflowHarness(definition, options);
}
