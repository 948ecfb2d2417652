import { describe, expect, it } from 'vitest';
import { createRunner, workflow } from '../../src/index.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { Alarm } from '../../src/worker/alarm.js';
import type { DuePoller, RoundResult } from '../../src/worker/due-poller.js';
import { type LoopMode, PollPace, WorkerLoop } from '../../src/worker/loop.js';
import { resolveWorkerOptions } from '../../src/worker/options.js';
import type { TaskPool } from '../../src/worker/task-pool.js';
import type { WorkerStats } from '../../src/worker/types.js';
import { recorder } from './recorder.js';

const pace = { minMs: 50, maxMs: 400, maxWithWakesMs: 1_600, factor: 2, jitter: 0 };

describe('PollPace', () => {
  it('doubles the pause after each empty round up to its cap, and back to the minimum after work', () => {
    const p = new PollPace({ ...pace, leaseCapMs: 100_000 });
    const plans = [0, 0, 0, 0, 0].map(() => {
      p.after(0, 1_000, false);
      return p.planned - 1_000;
    });
    expect(plans).toEqual([100, 200, 400, 400, 400]);
    p.after(0, 1_000, true);
    expect(p.planned - 1_000).toBe(800); // live wakes: polling is a backstop, the cap is higher
    p.after(3, 1_000, true);
    expect(p.planned - 1_000).toBe(50);
    p.full();
    expect(p.planned).toBe(0);
  });

  it('with wakes live, never pauses longer than a third of the task lease (a lapsed lease sends no notice)', () => {
    const p = new PollPace({ ...pace, leaseCapMs: 700 });
    const live = [0, 0, 0, 0, 0, 0].map(() => {
      p.after(0, 1_000, true);
      return p.planned - 1_000;
    });
    expect(live).toEqual([100, 200, 400, 700, 700, 700]);
    p.after(0, 1_000, false);
    expect(p.planned - 1_000).toBe(400); // without wakes, maxMs is the cap as before
  });
});

/** A loop over a scripted poller: each round takes the next result (or throws it). */
function scripted(results: Array<RoundResult | Error>, free = () => 1) {
  const wf = workflow('w', 1).task('t', { handler: 't' }).build();
  const runner = createRunner({ store: createMemoryStore(), workflows: [wf], handlers: { t: () => null } });
  const o = resolveWorkerOptions({ runner, poll: { ...pace, minMs: 1, maxMs: 2 }, clock: Date.now });
  const alarm = new Alarm(Date.now);
  const stats = { errors: 0, conflicts: 0 } as WorkerStats;
  const lanesAsked: boolean[] = [];
  const modes: LoopMode[] = [];
  let running = true;
  const poller = {
    async round(lanes: boolean) {
      lanesAsked.push(lanes);
      modes.push(loop.mode);
      const next = results.shift();
      if (!next) {
        running = false;
        return { ticked: 0, full: false, left: false };
      }
      if (next instanceof Error) throw next;
      return next;
    },
  } as unknown as DuePoller;
  const pool = { free } as unknown as TaskPool;
  const rec = recorder();
  const loop = new WorkerLoop(o, alarm, poller, pool, stats, rec.emit, () => running);
  return {
    loop,
    alarm,
    stats,
    lanesAsked,
    modes,
    errors: () => rec.events.filter((e) => e[0] === 'error').map((e) => e[1]),
    stop: () => (running = false),
  };
}

describe('WorkerLoop', () => {
  it('runs rounds until stopped, polling every lane first and after a full batch', async () => {
    const t = scripted([
      { ticked: 2, full: true, left: false },
      { ticked: 1, full: false, left: true },
      { ticked: 0, full: false, left: false },
    ]);
    await t.loop.run();
    expect(t.loop.mode).toBe('stopped');
    expect(t.loop.roundsDone).toBe(4);
    expect(t.lanesAsked[0]).toBe(true);
    expect(t.lanesAsked[1]).toBe(true); // after a full batch the planned poll is now
    expect(t.modes.every((m) => m === 'polling')).toBe(true);
  });

  it('a failed poll backs off on the outage schedule, reports the error, and the next round polls every lane', async () => {
    const down = new Error('store down');
    const t = scripted([down, down, { ticked: 0, full: false, left: false }]);
    const started = Date.now();
    await t.loop.run();
    expect(t.errors()).toEqual([down, down]);
    expect(t.stats.errors).toBe(2);
    expect(t.lanesAsked.slice(1, 3)).toEqual([true, true]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(100 + 200 - 40); // ~100 ms then ~200 ms, ±10%
  });

  it('waits for a slot without polling while every slot is taken, until rung', async () => {
    let free = 0;
    const t = scripted([{ ticked: 0, full: false, left: false }], () => free);
    const run = t.loop.run();
    await new Promise((r) => setTimeout(r, 20));
    expect(t.loop.mode).toBe('waitingForSlot');
    expect(t.lanesAsked).toEqual([]);
    free = 1;
    t.alarm.ring();
    await run;
    expect(t.lanesAsked.length).toBeGreaterThan(0);
  });

  it('nextRound resolves after the next round ends', async () => {
    const t = scripted([
      { ticked: 0, full: false, left: false },
      { ticked: 0, full: false, left: false },
    ]);
    const run = t.loop.run();
    await t.loop.nextRound();
    expect(t.loop.roundsDone).toBeGreaterThanOrEqual(1);
    t.stop();
    t.alarm.ring();
    await run;
  });
});
