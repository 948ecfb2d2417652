import type { Worker } from '@stepfold/engine';
import { slotRunId } from '@stepfold/engine/schedules';
import { describe, expect, it } from 'vitest';
import { createSim, MIN, report, T0 } from './schedule-fixtures.js';

// "A schedule every minute runs for a simulated day across a worker restart and a
// 10-minute outage: 1,440 slots, each started at most once, missed slots handled per the
// catch-up policy." The clock is simulated; workers are real, over one memory store.

const SLOTS = 1_440;
const RESTART = 400; // minute at which the worker process is replaced
const OUTAGE = { from: 700, to: 710 }; // no worker during minutes [700, 710)

async function simulatedDay(catchupWindowMs: number) {
  const sim = createSim();
  await sim.schedules.create({
    id: 'every-minute',
    workflow: report,
    cron: '* * * * *',
    timeZone: 'Europe/Paris',
    endAt: T0 + (SLOTS - 1) * MIN, // the day's last slot
    overlap: 'allow',
    catchupWindowMs,
    input: { team: 'ops' },
  });
  let worker: Worker | null = await sim.worker();
  const workers: Worker[] = [];
  for (let m = 0; m < SLOTS; m++) {
    // Each minute the worker wakes a little after the slot (lag), as a real one would.
    sim.now = T0 + m * MIN + 250;
    if (m === RESTART) {
      await worker!.stop(); // a deploy: this process drains and exits, a new one starts
      worker = await sim.worker();
    }
    if (m === OUTAGE.from) {
      await worker!.stop();
      worker = null;
    }
    if (m === OUTAGE.to) worker = await sim.worker();
    if (worker) await sim.advance(sim.now, [worker]);
    if (worker) workers.push(worker);
  }
  await sim.advance(T0 + SLOTS * MIN + 250, [worker!]); // one more minute: nothing is left to start
  await worker!.stop();
  return { sim, info: await sim.schedules.describe('every-minute'), workers: new Set(workers).size };
}

/** Every slot's run id, in order. */
const slotIds = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => slotRunId('every-minute', T0 + (from + i) * MIN));

describe('a schedule every minute for a simulated day', () => {
  it('a catch-up window longer than the outage starts every missed slot once, late', async () => {
    const { sim, info, workers } = await simulatedDay(15 * MIN);
    expect(workers).toBe(3); // the first, its replacement, the one after the outage
    const runs = sim.runs();
    expect(runs).toEqual(slotIds(0, SLOTS)); // every slot, and only slots
    expect([...sim.created.entries()].filter(([, n]) => n !== 1)).toEqual([]); // each created once
    expect(info.counts).toEqual({ started: SLOTS, skipped: 0, triggered: 0, backfilled: 0 });
    expect(info.status).toBe('ended');
    expect(info.nextSlot).toBeNull();
    // The missed slots were started together when the worker came back at minute 710.
    const late = await Promise.all(slotIds(OUTAGE.from, OUTAGE.to).map((id) => sim.store.load(id)));
    expect(late.map((s) => s?.createdAt)).toEqual(late.map(() => T0 + OUTAGE.to * MIN + 250));
    // And every run was done by some worker: the targets' tasks were handed to any of them.
    const statuses = await Promise.all(runs.map(async (id) => (await sim.store.load(id))?.status));
    expect(new Set(statuses)).toEqual(new Set(['completed']));
  });

  it('a catch-up window shorter than the outage skips the older missed slots, counted', async () => {
    const window = 3 * MIN;
    const { sim, info } = await simulatedDay(window);
    // Back at 710:00.250 with a 3-minute window: 707:00 is 3 min 0.25 s late, so the window keeps
    // 708, 709 and 710 (started then) and skips 700–707.
    const cut = OUTAGE.to - 2; // first missed slot inside the window
    const skipped = slotIds(OUTAGE.from, cut);
    expect(skipped).toHaveLength(8);
    const runs = sim.runs();
    expect(runs).toEqual([...slotIds(0, OUTAGE.from), ...slotIds(cut, SLOTS)]);
    expect([...sim.created.values()].every((n) => n === 1)).toBe(true);
    expect(info.counts.started + info.counts.skipped).toBe(SLOTS);
    expect(info.counts).toEqual({ started: SLOTS - 8, skipped: 8, triggered: 0, backfilled: 0 });
    expect(info.skippedBy).toEqual({ overlap: 0, catchup: 8, paused: 0, invalid: 0 });
    for (const id of skipped) expect(await sim.store.load(id)).toBeNull();
  });
});
