import {
  createMemoryStore,
  createRunner,
  type HandlerContext,
  isStepfoldError,
  type Store,
} from '@stepfold/engine';
import {
  createSchedules,
  FIRE_HANDLER,
  manualRunId,
  SCHEDULE_WORKFLOW,
  type ScheduleState,
  slotRunId,
} from '@stepfold/engine/schedules';
import { describe, expect, it } from 'vitest';
import { createSim, long, MIN, report, T0 } from './schedule-fixtures.js';

const at = (minute: number) => T0 + minute * MIN + 250;
const slot = (id: string, minute: number) => slotRunId(id, T0 + minute * MIN);
const everyMinute = { workflow: report, everyMs: MIN, input: { team: 'ops' }, overlap: 'allow' } as const;

describe('schedules: exactly once per slot', () => {
  it('two workers (two runners) racing on one schedule start each slot once', async () => {
    const sim = createSim();
    await sim.schedules.create({ id: 'race', ...everyMinute });
    const workers = [await sim.worker(), await sim.worker()];
    for (let m = 0; m < 30; m++) await sim.advance(at(m), workers);
    await Promise.all(workers.map((w) => w.stop()));
    expect(sim.runs()).toEqual(Array.from({ length: 30 }, (_, m) => slot('race', m)));
    expect([...sim.created.values()].every((n) => n === 1)).toBe(true);
    const info = await sim.schedules.describe('race');
    expect(info.counts.started).toBe(30);
  });

  it('a fire run twice on the same snapshot (a retry, a second taker) decides the same and starts once', async () => {
    const sim = createSim();
    await sim.schedules.create({ id: 'twice', ...everyMinute });
    // A runner that hands the fire off, so the test can run its handler by hand, twice at once.
    const api = createRunner({ store: sim.store, workflows: [sim.schedules.workflow], execute: false });
    sim.now = at(0);
    await api.processDue(sim.now);
    const s = (await sim.store.load('twice'))!;
    expect(s.tasks['fire']?.queued).toBe(true);
    const ctx = (later: number): HandlerContext<ScheduleState> => {
      sim.now = later; // the clock has moved on for the second: the decision must not
      return {
        input: s.input as ScheduleState,
        workflowInput: s.input,
        outputs: {},
        instanceId: 'twice',
        step: 'fire',
        phase: 'run',
        attempt: 1,
        idempotencyKey: 'k',
        iteration: 1,
        signal: new AbortController().signal,
        heartbeat: () => {},
        callback: () => Promise.reject(new Error('no callbacks here')),
        setAttributes: () => {},
        stream: { write: () => {}, flush: async () => {} },
      };
    };
    const fire = sim.schedules.handlers[FIRE_HANDLER];
    const [a, b] = await Promise.all([fire(ctx(at(0))), fire(ctx(at(5)))]);
    expect(b).toEqual(a);
    expect(a.counts.started).toBe(1);
    expect(sim.runs()).toEqual([slot('twice', 0)]);
    expect(sim.created.get(slot('twice', 0))).toBe(1);
    expect(sim.refused.get(slot('twice', 0))).toBe(1); // the second start met ALREADY_EXISTS
  });
});

describe('schedules: commands', () => {
  it('pause stops starts; resume continues from the next slot and skips the paused ones', async () => {
    const sim = createSim();
    await sim.schedules.create({ id: 'p', ...everyMinute });
    const w = [await sim.worker()];
    for (let m = 0; m < 3; m++) await sim.advance(at(m), w);
    // The worker has not run since 2:00 when the pause comes at 3:10: slot 3 is due, and the fire
    // that applies the pause runs only at 4:00. The pause counts from when it was sent: slot 3
    // (before it) starts, slot 4 (after it) does not.
    sim.now = at(3) + 10_000;
    await sim.schedules.pause('p', { note: 'maintenance' });
    for (let m = 4; m < 8; m++) await sim.advance(at(m), w);
    expect(sim.runs()).toEqual([0, 1, 2, 3].map((m) => slot('p', m)));
    const paused = await sim.schedules.describe('p');
    expect(paused).toMatchObject({ status: 'paused', paused: true, note: 'maintenance', nextSlot: null });
    sim.now = at(7) + 30_000;
    await sim.schedules.resume('p');
    await sim.advance(sim.now, w);
    for (let m = 8; m < 10; m++) await sim.advance(at(m), w);
    await w[0]!.stop();
    // Slots 4–7 fell while paused: skipped, not started on resume.
    expect(sim.runs()).toEqual([0, 1, 2, 3, 8, 9].map((m) => slot('p', m)));
    const info = await sim.schedules.describe('p');
    expect(info.counts).toMatchObject({ started: 6, skipped: 4 });
    expect(info.skippedBy.paused).toBe(4);
    expect(info.status).toBe('active');
  });

  it('resume with catchup starts the paused slots inside the catch-up window', async () => {
    const sim = createSim();
    await sim.schedules.create({ id: 'c', ...everyMinute, catchupWindowMs: 2 * MIN });
    const w = [await sim.worker()];
    await sim.advance(at(0), w);
    await sim.schedules.pause('c');
    for (let m = 1; m < 6; m++) await sim.advance(at(m), w);
    sim.now = at(5) + 30_000;
    await sim.schedules.resume('c', { catchup: true });
    await sim.advance(sim.now, w);
    await w[0]!.stop();
    // At 5:30.25 a 2-minute window reaches back to 3:30.25: slots 4 and 5 start, 1–3 are skipped.
    expect(sim.runs()).toEqual([0, 4, 5].map((m) => slot('c', m)));
    expect((await sim.schedules.describe('c')).skippedBy).toMatchObject({ catchup: 3, paused: 0 });
  });

  it('trigger now starts one run at once with its own deterministic id, whatever the overlap', async () => {
    const sim = createSim();
    await sim.schedules.create({ id: 't', workflow: long, everyMs: 10 * MIN, overlap: 'skip' });
    const w = [await sim.worker()];
    await sim.advance(at(0), w); // slot 0 starts and keeps running
    sim.now = at(1);
    const { runId } = await sim.schedules.trigger('t');
    expect(runId).toBe(manualRunId('t', at(1)));
    expect(runId).not.toBe(slot('t', 1));
    await sim.advance(sim.now, w);
    // The same trigger twice in one millisecond is one run (the id doubles as the signal id).
    expect((await sim.schedules.trigger('t')).runId).toBe(runId);
    await sim.advance(sim.now, w);
    await w[0]!.stop();
    expect(sim.runs('long')).toEqual([slot('t', 0), runId].sort());
    expect(sim.created.get(runId)).toBe(1);
    const info = await sim.schedules.describe('t');
    expect(info.counts).toMatchObject({ started: 1, triggered: 1 });
    expect(info.runs[0]).toMatchObject({ id: runId, how: 'trigger', status: 'waiting' });
  });

  it('tells each run its slot (ctx.schedule, snapshot.schedule): a slot, a backfilled slot, a trigger', async () => {
    const sim = createSim();
    await sim.schedules.create({ id: 'k', ...everyMinute });
    const w = [await sim.worker()];
    await sim.advance(at(0), w);
    sim.now = at(0) + 10_000;
    const { runId } = await sim.schedules.trigger('k');
    await sim.advance(sim.now, w);
    await sim.schedules.backfill('k', { from: T0 - MIN, to: T0 - MIN });
    await sim.advance(sim.now, w);
    await w[0]!.stop();
    expect(sim.told.get(slot('k', 0))).toEqual({ id: 'k', slot: T0, how: 'slot' });
    // A trigger-now's slot is the time it was triggered (the time its run id carries).
    expect(sim.told.get(runId)).toEqual({ id: 'k', slot: at(0) + 10_000, how: 'trigger' });
    expect(sim.told.get(slot('k', -1))).toEqual({ id: 'k', slot: T0 - MIN, how: 'backfill' });
    expect((await sim.store.load(slot('k', 0)))?.schedule).toEqual({ id: 'k', slot: T0, how: 'slot' });
  });

  it('a run started by hand has no schedule; one started for a slot by hand keeps the slot given', async () => {
    const sim = createSim();
    const w = [await sim.worker()];
    const runner = createRunner({
      store: sim.store,
      workflows: [report],
      handlers: { buildReport: () => null },
      execute: false,
      clock: () => sim.now,
    });
    await runner.start('report', 'plain', { team: 'ops' });
    const again = { id: 'nightly', slot: T0, how: 'slot' } as const;
    await runner.start('report', 'redo', { team: 'ops' }, { schedule: again });
    const bad = { id: 'nightly', slot: -1, how: 'slot' } as const;
    await expect(runner.start('report', 'bad', { team: 'ops' }, { schedule: bad })).rejects.toMatchObject({
      code: 'INVALID_EVENT',
    });
    await sim.advance(sim.now, w);
    await w[0]!.stop();
    expect(sim.told.get('plain')).toBeUndefined();
    expect(sim.told.has('plain')).toBe(true);
    expect(sim.told.get('redo')).toEqual(again);
  });

  it('backfill starts exactly the slots of the range that were never started', async () => {
    const sim = createSim();
    await sim.schedules.create({ id: 'b', ...everyMinute });
    const w = [await sim.worker()];
    for (let m = 0; m < 3; m++) await sim.advance(at(m), w);
    await sim.schedules.pause('b');
    for (let m = 3; m < 7; m++) await sim.advance(at(m), w);
    sim.now = at(6) + 30_000;
    await sim.schedules.resume('b');
    for (let m = 7; m < 9; m++) await sim.advance(at(m), w);
    expect(sim.runs()).toEqual([0, 1, 2, 7, 8].map((m) => slot('b', m)));
    const { slots } = await sim.schedules.backfill('b', { from: new Date(T0), to: T0 + 8 * MIN });
    expect(slots).toBe(9);
    await sim.advance(sim.now, w);
    await w[0]!.stop();
    expect(sim.runs()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8].map((m) => slot('b', m)));
    expect([...sim.created.values()].every((n) => n === 1)).toBe(true);
    expect((await sim.schedules.describe('b')).counts).toMatchObject({ started: 5, backfilled: 4 });
    await expect(sim.schedules.backfill('b', { from: T0, to: at(60) })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
  });

  it('delete removes the schedule and nothing more starts', async () => {
    const sim = createSim();
    await sim.schedules.create({ id: 'd', ...everyMinute });
    const w = [await sim.worker()];
    for (let m = 0; m < 3; m++) await sim.advance(at(m), w);
    expect(await sim.schedules.delete('d')).toBe(true);
    expect(await sim.store.load('d')).toBeNull();
    for (let m = 3; m < 8; m++) await sim.advance(at(m), w);
    await w[0]!.stop();
    expect(sim.runs()).toEqual([0, 1, 2].map((m) => slot('d', m)));
    await expect(sim.schedules.describe('d')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(sim.schedules.pause('d')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await sim.schedules.delete('d')).toBe(false);
    expect((await sim.schedules.list()).items).toEqual([]);
  });
});

describe('schedules: overlap', () => {
  it('skip: a slot whose previous run still goes is skipped and recorded', async () => {
    const sim = createSim();
    await sim.schedules.create({ id: 's', workflow: long, everyMs: MIN });
    const w = [await sim.worker()];
    for (let m = 0; m < 3; m++) await sim.advance(at(m), w);
    const runner = createRunner({ store: sim.store, workflows: [long], execute: false });
    await runner.signal(slot('s', 0), 'finish');
    await sim.advance(at(3), w);
    await w[0]!.stop();
    expect(sim.runs('long')).toEqual([slot('s', 0), slot('s', 3)]);
    const info = await sim.schedules.describe('s');
    expect(info.counts).toMatchObject({ started: 2, skipped: 2 });
    expect(info.skips).toEqual([
      { slot: T0 + 2 * MIN, reason: 'overlap' },
      { slot: T0 + MIN, reason: 'overlap' },
    ]);
  });

  it('bufferOne: keeps one slot, starts it once the previous run finishes, skips the rest', async () => {
    const sim = createSim();
    await sim.schedules.create({
      id: 'b1',
      workflow: long,
      everyMs: MIN,
      overlap: 'bufferOne',
      overlapCheckMs: 5_000,
    });
    const w = [await sim.worker()];
    for (let m = 0; m < 3; m++) await sim.advance(at(m), w);
    expect((await sim.schedules.describe('b1')).buffered).toBe(T0 + MIN);
    const runner = createRunner({ store: sim.store, workflows: [long], execute: false });
    await runner.signal(slot('b1', 0), 'finish');
    // The buffered slot looks every overlapCheckMs: the next look after the finish starts it.
    for (let t = at(2); t <= at(2) + 20_000; t += 5_000) await sim.advance(t, w);
    await w[0]!.stop();
    expect(sim.runs('long')).toEqual([slot('b1', 0), slot('b1', 1)]);
    const info = await sim.schedules.describe('b1');
    expect(info).toMatchObject({ buffered: null, counts: { started: 2, skipped: 1 } });
    expect(info.skips).toEqual([{ slot: T0 + 2 * MIN, reason: 'overlap' }]);
  });
});

describe('schedules: definition and errors', () => {
  it('cron slots are read in the time zone; interval slots respect startAt and endAt', async () => {
    const sim = createSim(Date.UTC(2026, 0, 15, 12));
    const paris = await sim.schedules.create({
      id: 'paris',
      workflow: report,
      cron: '0 2 * * *',
      timeZone: 'Europe/Paris',
      input: { team: 'ops' },
    });
    expect(paris.nextSlot).toBe(Date.UTC(2026, 0, 16, 1)); // 02:00 in Paris is 01:00 UTC in winter
    const summer = createSim(Date.UTC(2026, 6, 15, 12));
    const july = await summer.schedules.create({
      id: 'july',
      workflow: report,
      cron: '0 2 * * *',
      timeZone: 'Europe/Paris',
      input: { team: 'ops' },
    });
    expect(july.nextSlot).toBe(Date.UTC(2026, 6, 16, 0)); // and 00:00 UTC in summer
    const window = await sim.schedules.create({
      id: 'window',
      ...everyMinute,
      startAt: sim.now + 5 * MIN,
      endAt: sim.now + 7 * MIN,
    });
    expect(window.nextSlot).toBe(sim.now + 5 * MIN);
    const w = [await sim.worker()];
    for (let m = 0; m < 10; m++) await sim.advance(sim.now + MIN, w);
    await w[0]!.stop();
    expect(sim.runs().filter((id) => id.startsWith('window:'))).toHaveLength(3);
    expect(await sim.schedules.describe('window')).toMatchObject({ status: 'ended', nextSlot: null });
  });

  it('an invalid cron, time zone or input is a typed error at create, with nothing written', async () => {
    const sim = createSim();
    const base = { id: 'bad', workflow: report, input: { team: 'ops' } } as const;
    const refusal = async (p: Promise<unknown>) => {
      try {
        await p;
      } catch (e) {
        return isStepfoldError(e) ? { code: e.code, paths: e.issues.map((i) => i.path) } : e;
      }
      throw new Error('not refused');
    };
    expect(await refusal(sim.schedules.create({ ...base, cron: '61 * * * *' }))).toEqual({
      code: 'INVALID_DEFINITION',
      paths: ['cron'],
    });
    expect(
      await refusal(sim.schedules.create({ ...base, cron: '0 2 * * *', timeZone: 'Mars/Olympus' })),
    ).toEqual({
      code: 'INVALID_DEFINITION',
      paths: ['timeZone'],
    });
    expect(await refusal(sim.schedules.create({ ...base, everyMs: 10 }))).toEqual({
      code: 'INVALID_DEFINITION',
      paths: ['everyMs'],
    });
    expect(
      await refusal(sim.schedules.create({ ...base, cron: '* * * * *', input: { team: 7 } as never })),
    ).toEqual({ code: 'INVALID_INPUT', paths: ['input.team'] });
    expect(await refusal(sim.schedules.create({ ...base, id: 'a b', cron: '* * * * *' }))).toMatchObject({
      code: 'INVALID_ID',
    });
    expect(sim.created.size).toBe(0);
    expect((await sim.store.list({ limit: 10 })).items).toEqual([]);
    await sim.schedules.create({ ...base, cron: '* * * * *' });
    expect(await refusal(sim.schedules.create({ ...base, cron: '* * * * *' }))).toMatchObject({
      code: 'ALREADY_EXISTS',
    });
  });

  it('a cron expression of seven fields (with a year) is INVALID_DEFINITION: five or six fields only', async () => {
    const sim = createSim();
    const base = { id: 'yearly', workflow: report, input: { team: 'ops' } } as const;
    const refused = await sim.schedules.create({ ...base, cron: '0 0 12 * * * 2030' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({
      code: 'INVALID_DEFINITION',
      issues: [
        { path: 'cron', message: '"0 0 12 * * * 2030" has 7 fields: must have 5, or 6 with seconds first' },
      ],
    });
    expect((await sim.store.list({ limit: 10 })).items).toEqual([]);
    // Six fields (seconds first) and a nickname stay fine.
    await sim.schedules.create({ ...base, cron: '0 0 12 * * *' });
    await sim.schedules.create({ ...base, id: 'daily', cron: '@daily' });
  });

  it('parked in dlq after its fire kept failing, describes the error that parked it', async () => {
    let now = T0 - 30_000;
    const inner = createMemoryStore();
    // The store refuses every run of the target (a disk full for them, say): each fire fails.
    const store: Store = {
      ...inner,
      maxSnapshotBytes: inner.maxSnapshotBytes,
      async create(s) {
        if (s.workflow.name === report.name) throw new Error('disk full');
        return inner.create(s);
      },
    };
    const schedules = createSchedules({ store, workflows: [report], clock: () => now });
    const worker = createRunner({
      store,
      workflows: [report, schedules.workflow],
      handlers: { buildReport: () => 'done', ...schedules.handlers },
      clock: () => now,
    });
    await schedules.create({ id: 'broken', workflow: report, everyMs: MIN, input: { team: 'ops' } });
    expect((await schedules.describe('broken')).dlqError).toBeUndefined();
    for (let i = 0; i < 200 && (await store.load('broken'))?.status !== 'dlq'; i++) {
      now = Math.max(now, (await store.load('broken'))?.wakeAt ?? now);
      await worker.processDue(now);
      await worker.idle();
    }
    const info = await schedules.describe('broken');
    expect(info.status).toBe('dlq');
    expect(info.dlqError).toEqual({ message: 'disk full' });
  });

  it('lists schedules, and they are instances of the built-in workflow', async () => {
    const sim = createSim();
    await sim.schedules.create({ id: 'a', ...everyMinute });
    await sim.schedules.create({ id: 'z', workflow: long, cron: '*/5 * * * *', paused: true });
    const { items } = await sim.schedules.list();
    expect(items.map((i) => [i.id, i.status, i.workflow])).toEqual([
      ['a', 'active', 'report'],
      ['z', 'paused', 'long'],
    ]);
    expect((await sim.store.load('a'))?.workflow.name).toBe(SCHEDULE_WORKFLOW);
  });
});
