import { workflow } from '../definition/builder.js';
import { type } from '../definition/declared-schemas.js';
import type { HandlerContext } from '../runner/handler-types.js';
import type { ScheduleCommand, ScheduleState } from './state.js';

// A schedule is an instance of this built-in workflow, made of the ordinary step kinds: nothing
// in the reducer knows about schedules. One loop per decision:
//
//   route ─ wakeAt set ─▶ armed (parallel, join any) ─┬ timer: sleep until input.wakeAt
//     │                                               └ command: wait for a control signal
//     └─ none (paused, ended) ─▶ idle: wait for a control signal
//   ─▶ fire (task: decides the due slots and starts their runs) ─▶ again (continueAsNew, carry fire's output)
//
// The fire handler computes the next wake time and records it in its output, so time is read by a
// handler, never by the reducer, and a replay of the log is identical.

/** The name of the built-in schedule workflow. */
export const SCHEDULE_WORKFLOW = 'stepfold.schedule';
/** The name of the schedule's handler, which a worker's runner must provide (`schedules.handlers`). */
export const FIRE_HANDLER = 'stepfold.schedule.fire';
/** The signal that carries commands (pause, resume, trigger, backfill) to a schedule. */
export const CONTROL_SIGNAL = 'control';

/** The schedule's handler: decides the due slots, starts their runs, returns the next state. */
export type FireHandler = (ctx: HandlerContext<ScheduleState>) => Promise<ScheduleState>;

/** The handler map a worker's runner adds for schedules. */
export type ScheduleHandlers = { [FIRE_HANDLER]: FireHandler };

/**
 * The built-in schedule workflow. Register it (with `schedules.handlers`) in the runner of every
 * worker that should drive schedules; the same object in every process, so its hash matches.
 */
export const scheduleWorkflow = workflow(SCHEDULE_WORKFLOW, 1, {
  // A fire that keeps failing (the store down for hours) parks in dlq for a requeue: a schedule is
  // never rolled back or ended by an error.
  onFailure: 'dlq',
  description: 'a stepfold schedule: starts its target workflow once per slot',
})
  .input<ScheduleState>()
  .handlers<ScheduleHandlers>()
  .signal(CONTROL_SIGNAL, type<ScheduleCommand>())
  .choice('route', { branches: [{ when: { exists: 'input.wakeAt' }, next: 'armed' }], otherwise: 'idle' })
  .parallel('armed', { branches: ['timer', 'command'], join: 'any', next: 'fire' })
  .sleep('timer', { until: 'input.wakeAt', end: true })
  .wait('command', { signal: CONTROL_SIGNAL, end: true })
  .wait('idle', { signal: CONTROL_SIGNAL, next: 'fire' })
  .task('fire', {
    handler: FIRE_HANDLER,
    // About 1.5 hours of retries (1 s doubling to a minute) before it parks in dlq.
    retry: { maxAttempts: 100, initialMs: 1_000, factor: 2, maxMs: 60_000 },
    timeoutMs: 120_000,
  })
  .continueAsNew('again', { carry: 'outputs.fire' })
  .build();
