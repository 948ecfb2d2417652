import type { Store } from '@stepfold/engine';
import { type Command, InvalidArgumentError } from 'commander';
import { jsonOption, positiveInt, type StoreOptions, storeOption } from '../options.js';
import { createOutput } from '../output.js';
import { actOnSchedule, listSchedules, type ScheduleResult, showSchedule } from '../schedule-actions.js';
import { storeUrlOf, withStore } from '../store-url.js';

/** A time given as ISO 8601 (`2026-01-01T02:00:00Z`) or epoch ms. */
export function timeArgument(value: string): number {
  const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isSafeInteger(ms)) throw new InvalidArgumentError('expected an ISO 8601 time or epoch ms');
  return ms;
}

/** Opens the store, runs the subcommand, prints its result. */
async function run(options: StoreOptions, body: (store: Store) => Promise<ScheduleResult>): Promise<void> {
  const out = createOutput(options.json === true);
  await withStore(storeUrlOf(options.store), async ({ store }) => {
    const r = await body(store);
    out.result(r.data, () => r.lines);
  });
}

/** Adds `--store` and `--json` to a subcommand. */
const storeAndJson = (cmd: Command) => jsonOption(storeOption(cmd));

/** `stepfold schedule list|show|pause|resume|trigger|backfill|delete`: schedules kept in a store. */
export function register(program: Command): void {
  const schedule = program
    .command('schedule')
    .description('list, show and steer schedules (pause, resume, trigger, backfill, delete)');

  storeAndJson(
    schedule
      .command('list')
      .description('schedules in id order, paged')
      .option('--limit <n>', 'page size', positiveInt, 50)
      .option('--cursor <cursor>', 'the cursor a previous page printed'),
  ).action((o: StoreOptions & { limit: number; cursor?: string }) =>
    run(o, (store) => listSchedules(store, o)),
  );

  storeAndJson(
    schedule
      .command('show')
      .description('a schedule: next slot, counts, recent runs')
      .argument('<id>', 'schedule id'),
  ).action((id: string, o: StoreOptions) => run(o, (store) => showSchedule(store, id)));

  storeAndJson(
    schedule
      .command('pause')
      .description('stop starting runs (slots that pass while paused are skipped)')
      .argument('<id>', 'schedule id')
      .option('--note <text>', 'why, shown with the schedule'),
  ).action((id: string, o: StoreOptions & { note?: string }) =>
    run(o, (store) => actOnSchedule(store, id, { op: 'pause', note: o.note })),
  );

  storeAndJson(
    schedule
      .command('resume')
      .description('start runs again from the next slot')
      .argument('<id>', 'schedule id')
      .option('--catchup', 'start the slots missed while paused that are inside the catch-up window'),
  ).action((id: string, o: StoreOptions & { catchup?: boolean }) =>
    run(o, (store) => actOnSchedule(store, id, { op: 'resume', catchup: o.catchup === true })),
  );

  storeAndJson(
    schedule.command('trigger').description('start one run now (its own id)').argument('<id>', 'schedule id'),
  ).action((id: string, o: StoreOptions) => run(o, (store) => actOnSchedule(store, id, { op: 'trigger' })));

  storeAndJson(
    schedule
      .command('backfill')
      .description('start every slot in [from, to] never started (at most 1000, none in the future)')
      .argument('<id>', 'schedule id')
      .requiredOption('--from <time>', 'ISO 8601 time or epoch ms', timeArgument)
      .requiredOption('--to <time>', 'ISO 8601 time or epoch ms', timeArgument),
  ).action((id: string, o: StoreOptions & { from: number; to: number }) =>
    run(o, (store) => actOnSchedule(store, id, { op: 'backfill', from: o.from, to: o.to })),
  );

  storeAndJson(
    schedule
      .command('delete')
      .description('end the schedule and remove it (the runs it started stay)')
      .argument('<id>', 'schedule id'),
  ).action((id: string, o: StoreOptions) => run(o, (store) => actOnSchedule(store, id, { op: 'delete' })));
}
