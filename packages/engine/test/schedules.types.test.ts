import {
  createMemoryStore,
  createRunner,
  type HandlerContext,
  type ScheduledFor,
  workflow,
} from '@stepfold/engine';
import { createSchedules, type ScheduleInfo } from '@stepfold/engine/schedules';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as z from 'zod/mini';

// Each @ts-expect-error line is a mistake the compiler must see (tsc fails if a line stops being
// an error). The calls sit in a function that is never called: nothing is written.

const handlers = { buildReport: ({ input }: HandlerContext<{ team: string }>) => `report for ${input.team}` };
const report = workflow('report', 1)
  .handlers<typeof handlers>()
  .input(z.object({ team: z.string(), days: z.optional(z.number()) }))
  .task('build', { handler: 'buildReport', input: { team: 'input.team' } })
  .build();
const untyped = workflow('cleanup', 1).task('sweep', { handler: 'sweep' }).build();
const other = workflow('other', 1)
  .input(z.object({ n: z.number() }))
  .task('t', { handler: 't' })
  .build();

describe('schedules are typed by their target definition', () => {
  it('create checks the input against the declared input at compile time', () => {
    const store = createMemoryStore();
    const schedules = createSchedules({ store, workflows: [report, untyped] });
    const compileOnly = async () => {
      const info = await schedules.create({
        id: 'nightly',
        workflow: report,
        cron: '0 2 * * *',
        timeZone: 'Europe/Paris',
        input: { team: 'ops', days: 7 },
      });
      expectTypeOf(info).toEqualTypeOf<ScheduleInfo>();
      // @ts-expect-error team must be a string
      await schedules.create({ id: 'n', workflow: report, cron: '0 2 * * *', input: { team: 7 } });
      // @ts-expect-error report declares an input: it is required
      await schedules.create({ id: 'n', workflow: report, everyMs: 60_000 });
      // @ts-expect-error a field the declared input does not have
      await schedules.create({ id: 'n', workflow: report, everyMs: 60_000, input: { team: 'a', dayz: 1 } });
      await schedules.create({
        // @ts-expect-error cron and everyMs exclude each other (the message is on id)
        id: 'n',
        workflow: report,
        cron: '* * * * *',
        everyMs: 60_000,
        input: { team: 'a' },
      });
      await schedules.create({
        // @ts-expect-error a time zone goes with a cron expression only (the message is on id)
        id: 'n',
        workflow: report,
        everyMs: 60_000,
        timeZone: 'UTC',
        input: { team: 'a' },
      });
      // @ts-expect-error not one of the workflows given to createSchedules
      await schedules.create({ id: 'n', workflow: other, everyMs: 60_000, input: { n: 1 } });
      await schedules.create({
        id: 'n',
        workflow: report,
        everyMs: 60_000,
        input: { team: 'a' },
        // @ts-expect-error an unknown overlap policy
        overlap: 'bufferAll',
      });
      // An untyped definition takes any input, or none.
      await schedules.create({ id: 'c', workflow: untyped, everyMs: 60_000 });
      await schedules.create({ id: 'c', workflow: untyped, everyMs: 60_000, input: { anything: true } });
    };
    expect(typeof compileOnly).toBe('function');
  });

  it("a worker's runner takes the schedule workflow and its handler, checked like any other", () => {
    const store = createMemoryStore();
    const schedules = createSchedules({ store, workflows: [report] });
    const runner = createRunner({
      store,
      workflows: [report, schedules.workflow],
      handlers: { ...handlers, ...schedules.handlers },
    });
    expectTypeOf(runner.start).parameter(0).toEqualTypeOf<'report' | 'stepfold.schedule'>();
    // At run time the same runner throws UNKNOWN_HANDLER; the compiler says it first.
    const compileOnly = () =>
      // @ts-expect-error the schedule's handler is missing
      createRunner({ store, workflows: [report, schedules.workflow], handlers });
    expect(typeof compileOnly).toBe('function');
  });

  it("a handler reads its run's slot as ctx.schedule, typed", () => {
    expectTypeOf<HandlerContext['schedule']>().toEqualTypeOf<ScheduledFor | undefined>();
    expectTypeOf<ScheduledFor>().toEqualTypeOf<{
      id: string;
      slot: number;
      how: 'slot' | 'backfill' | 'trigger';
    }>();
  });
});
