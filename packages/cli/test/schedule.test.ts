import { createMemoryStore, createRunner, workflow } from '@stepfold/engine';
import { createSchedules, type ScheduleDescription, slotRunId } from '@stepfold/engine/schedules';
import { describe, expect, it } from 'vitest';
import { timeArgument } from '../src/commands/schedule.js';
import { EXIT, exitCodeOf } from '../src/exit-codes.js';
import { actOnSchedule, describeLines, listSchedules, showSchedule } from '../src/schedule-actions.js';
import { cli } from './cli.js';

// The `stepfold schedule` subcommands on a memory store (what they do once the store is open),
// and their argument errors through the real binary (no store needed for those).

const T0 = Date.UTC(2026, 0, 1);
const MIN = 60_000;
const report = workflow('report', 1).task('build', { handler: 'build' }).build();

async function world() {
  let now = T0 - 30_000;
  const store = createMemoryStore();
  const schedules = createSchedules({ store, workflows: [report], clock: () => now });
  // The user's worker process: runs the schedule's fire and the report (here by processDue).
  const worker = createRunner({
    store,
    workflows: [report, schedules.workflow],
    handlers: { build: () => 'ok', ...schedules.handlers },
    clock: () => now,
  });
  const tick = async (at: number) => {
    now = at;
    while ((await worker.processDue(at)).length) {}
  };
  await schedules.create({ id: 'nightly', workflow: report, cron: '0 2 * * *', timeZone: 'Europe/Paris' });
  await schedules.create({ id: 'minutely', workflow: report, everyMs: MIN });
  return { store, tick, clock: () => now };
}

describe('stepfold schedule', () => {
  it('list and show read the schedules in the store', async () => {
    const w = await world();
    await w.tick(T0 + 250);
    const list = await listSchedules(w.store, { limit: 10 });
    expect(list.lines).toEqual([
      'id        workflow  when                           status  next slot                 started  skipped',
      'minutely  report    every 60s                      active  2026-01-01T00:01:00.000Z  1        0',
      'nightly   report    cron "0 2 * * *" Europe/Paris  active  2026-01-01T01:00:00.000Z  0        0',
    ]);
    const page = await listSchedules(w.store, { limit: 1 });
    expect(page.lines.at(-1)).toBe('next page: --cursor minutely');
    const show = await showSchedule(w.store, 'minutely');
    expect((show.data as ScheduleDescription).runs.map((r) => [r.id, r.status])).toEqual([
      [slotRunId('minutely', T0), 'completed'],
    ]);
    expect(show.lines.slice(0, 4)).toEqual([
      'minutely: active; starts report, every 60s',
      'overlap skip, catch-up window 60000 ms',
      'next slot 2026-01-01T00:01:00.000Z, last slot 2026-01-01T00:00:00.000Z',
      'started 1, skipped 0 (overlap 0, catchup 0, paused 0, invalid 0), triggered 0, backfilled 0',
    ]);
  });

  it('show says what parked a schedule in dlq', async () => {
    const w = await world();
    const d = (await showSchedule(w.store, 'minutely')).data as ScheduleDescription;
    const parked = { ...d, status: 'dlq' as const, dlqError: { message: 'disk full', code: 'EIO' } };
    expect(describeLines(parked)).toContain('parked by: EIO: disk full');
    expect(describeLines(d).some((l) => l.startsWith('parked by'))).toBe(false);
  });

  it('pause, resume, trigger, backfill and delete write a command a worker applies', async () => {
    const w = await world();
    await w.tick(T0 + 250);
    await actOnSchedule(w.store, 'minutely', { op: 'pause', note: 'freeze' }, w.clock);
    await w.tick(T0 + 3 * MIN + 250);
    expect((await showSchedule(w.store, 'minutely')).lines[0]).toBe(
      'minutely: paused (freeze); starts report, every 60s',
    );
    await actOnSchedule(w.store, 'minutely', { op: 'resume', catchup: false }, w.clock);
    const trig = await actOnSchedule(w.store, 'minutely', { op: 'trigger' }, w.clock);
    const runId = (trig.data as { runId: string }).runId;
    expect(runId).toBe(`minutely:manual:${new Date(T0 + 3 * MIN + 250).toISOString()}`);
    await w.tick(T0 + 3 * MIN + 250);
    const fill = await actOnSchedule(
      w.store,
      'minutely',
      { op: 'backfill', from: T0, to: T0 + 3 * MIN },
      w.clock,
    );
    expect(fill.data).toMatchObject({ slots: 4 });
    await w.tick(T0 + 3 * MIN + 250);
    const d = (await showSchedule(w.store, 'minutely')).data as ScheduleDescription;
    expect(d.counts).toEqual({ started: 1, skipped: 3, triggered: 1, backfilled: 3 });
    for (const m of [0, 1, 2, 3])
      expect(await w.store.load(slotRunId('minutely', T0 + m * MIN))).not.toBeNull();
    expect(await w.store.load(runId)).not.toBeNull();
    await actOnSchedule(w.store, 'minutely', { op: 'delete' }, w.clock);
    expect(await w.store.load('minutely')).toBeNull();
    const missing = await actOnSchedule(w.store, 'minutely', { op: 'delete' }, w.clock).catch(
      (e: unknown) => e,
    );
    expect(exitCodeOf(missing)).toBe(EXIT['not-found']);
    const bad = await actOnSchedule(
      w.store,
      'nightly',
      { op: 'backfill', from: T0, to: T0 + 9e12 },
      w.clock,
    ).catch((e: unknown) => e);
    expect(exitCodeOf(bad)).toBe(EXIT.invalid);
  });

  it('times are ISO 8601 or epoch ms; bad arguments are usage errors (exit 2)', async () => {
    expect(timeArgument('2026-01-01T02:00:00Z')).toBe(Date.UTC(2026, 0, 1, 2));
    expect(timeArgument('1767232800000')).toBe(1767232800000);
    expect(() => timeArgument('yesterday')).toThrow(/ISO 8601/);
    const r = await cli([
      'schedule',
      'backfill',
      'x',
      '--from',
      'yesterday',
      '--to',
      '0',
      '--store',
      'redis://x',
    ]);
    expect(r.code).toBe(EXIT.usage);
    expect((await cli(['schedule', 'list'])).stderr).toMatch(/^error USAGE: no store/);
  });
});
