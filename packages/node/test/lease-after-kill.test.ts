import { composition, createRunner } from '@stepfold/engine';
import { afterAll, describe, expect, it } from 'vitest';
import { batch } from './fixtures/lease-worker.mjs';
import { openTestStore } from './support/test-stores.js';
import { workerSet } from './support/worker-process.js';

// A dead worker's running tasks come back in seconds, not at their deadline. A worker process
// takes a map's 20 items (deadline 300 s each) and is SIGKILLed while they run; another worker
// process, polling at its idle pace, must have all 20 running again within 15 s: their leases
// (the default 10 s) lapse with nobody renewing them, and its due poll retries each as attempt 2.

const SCHEMA = `lease_${process.pid}`;
const ITEMS = 20;
const WORKER = new URL('./fixtures/lease-worker.mjs', import.meta.url);

interface Started {
  started: string;
  item: number;
  attempt: number;
  pid: number;
}

const db = openTestStore('postgres', SCHEMA, { poolMax: 2 });
afterAll(() => db.drop());

/** The environment of a worker process: its store, and whether its handlers hang or finish. */
const workerEnv = (mode: 'hang' | 'finish') => ({
  LEASE_URL: db.url,
  LEASE_SCHEMA: SCHEMA,
  LEASE_MODE: mode,
});

describe('a SIGKILLed worker', () => {
  it('has its 20 running map items (deadline 300 s) running again in another worker within 15 s', async () => {
    const { store } = db;
    await store.setup();
    const workers = workerSet();
    try {
      const doomed = await workers.start(WORKER, workerEnv('hang'));
      // This process only writes: the items are handed off, and the one worker up takes them all.
      const api = createRunner({ store, workflows: [batch], kinds: [composition], execute: false });
      const allFirst = doomed.collect<Started>('started', ITEMS);
      await api.start('batch', 'batch-1', { xs: Array.from({ length: ITEMS }, (_, i) => i) });
      const first = await allFirst;
      expect(first.every((m) => m.attempt === 1 && m.pid === doomed.pid)).toBe(true);
      const running = (await store.load('batch-1'))!;
      const tasks = Object.values(running.tasks);
      expect(tasks).toHaveLength(ITEMS);
      // Minutes to their deadline, seconds to their lease.
      const now = Date.now();
      for (const t of tasks) {
        expect(t.deadline).toBeGreaterThan(now + 250_000);
        expect(t.leaseUntil).toBeLessThanOrEqual(now + 10_000);
      }

      // The other worker is up and idle (nothing is due) before the kill.
      const rescuer = await workers.start(WORKER, workerEnv('finish'));
      const allSecond = rescuer.collect<Started>('started', ITEMS);
      const killedAt = Date.now();
      await doomed.kill();

      const second = await allSecond;
      const took = Date.now() - killedAt;
      console.log(`20 items of a SIGKILLed worker running again in ${took} ms`);
      expect(took).toBeLessThan(15_000);
      // The same items, keys and next attempt, each once, in the other process.
      expect(second.map((m) => m.started).sort()).toEqual(first.map((m) => m.started).sort());
      expect(second.every((m) => m.attempt === 2 && m.pid === rescuer.pid)).toBe(true);
      await expect
        .poll(async () => (await store.load('batch-1'))?.status, { timeout: 10_000, interval: 200 })
        .toBe('completed');
      const done = (await store.load('batch-1'))!;
      expect(done.steps.items?.map?.ok).toBe(ITEMS);
    } finally {
      await workers.stopAll();
    }
  }, 45_000);
});
