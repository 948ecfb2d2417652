import type { EventOf } from '../../events.js';
import type { SignalRecord, StepState, TaskState, TimerState } from '../../snapshot.js';
import type { Cx } from '../transition-context.js';

/** A handler's result event. */
export type ResultEvent = EventOf<'task.completed'> | EventOf<'task.failed'>;

/**
 * What the reducer does with one step kind, in one place: on entry, on a signal, a timer, a
 * handler's result, a lost attempt, a requeue, and when one of the branches it forks ends. The
 * core (flow, timers, compensation, rules) calls these through the table in `kinds/index.ts` and
 * owns what all kinds share: cursors, finishing, the log, timers and rollback.
 */
export interface StepRules<D> {
  /** The cursor reached the step: its state is fresh and `step.started` is logged. */
  enter(cx: Cx, def: D): void;
  /** Rejects a live signal the step cannot use, before anything is written. */
  checkSignal?(cx: Cx, def: D, ev: EventOf<'signal'>): void;
  /** A signal the step listens for reached it while active (live, or from the inbox). */
  signal?(cx: Cx, def: D, sig: SignalRecord): void;
  /** One of the step's timers fired (it is already removed and logged). */
  timer?(cx: Cx, def: D, timer: TimerState): void;
  /** Handler results: `match` finds the task a result is for (null: stale, ignore it). */
  result?: {
    match(cx: Cx, def: D, ev: ResultEvent): TaskState | null;
    apply(cx: Cx, def: D, task: TaskState, ev: ResultEvent): void;
  };
  /** An attempt of the step missed its deadline (its task is already removed). */
  lost?(cx: Cx, def: D, task: TaskState): void;
  /** The step, parked in dlq, is requeued; without this rule it is entered again. */
  requeue?(cx: Cx, def: D, st: StepState): void;
  /** A branch this step forked ran out of steps with `output`. */
  branchEnded?(cx: Cx, def: D, branch: number, output: unknown): void;
}
