import type { SignalsOf, StepOutputsOf } from '../definition/typed-definition.js';
import type { StepOptions } from '../reducer/reducer.js';
import type { AnyDefinition } from '../runner/handler-types.js';
import type { Snapshot, TaskState } from '../snapshot.js';

// The harness's types: what its methods take, kept apart from the class that drives instances.

/** Step ids a result may be reported for: a typed definition's steps with an output (any string when untyped). */
export type TaskStepOf<D> = keyof StepOutputsOf<D> & string;
/** How a result is reported for one attempt: which attempt, of which phase, or by idempotency key. */
export type ReportOptions = {
  attempt?: number;
  phase?: 'run' | 'compensate';
  key?: string;
  /** A map step's item. */
  item?: number | undefined;
};
// Unions of argument lists rather than generic methods, so a harness of a typed definition still
// passes where a `WorkflowHarness` is asked for (method parameters compare both ways).
/** `complete`'s arguments: a step id and that step's output (typed for a typed definition). */
export type CompleteArgs<D> = {
  [K in TaskStepOf<D>]: [stepId: K, output?: StepOutputsOf<D>[K] | undefined, o?: ReportOptions];
}[TaskStepOf<D>];
/** `signal`'s arguments: a signal name and its payload (typed for a typed definition). */
export type SignalArgs<D> = {
  [K in keyof SignalsOf<D> & string]: [name: K, payload?: SignalsOf<D>[K], id?: string];
}[keyof SignalsOf<D> & string];

/** A task the snapshot currently asks someone to run, with the input its handler would get. */
export interface DispatchedTask<Step extends string = string> extends TaskState {
  /** The step the task runs for (a typed definition's step id). */
  step: Step;
  input: unknown;
  /** How many times the step has been entered in this run. */
  iteration: number;
}

/** Synchronous handlers for `WorkflowHarness.runHandlers`: return an output or throw to fail. */
export type SyncHandlers = Record<string, (task: DispatchedTask) => unknown>;

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
