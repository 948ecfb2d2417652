import { createRunner } from '@stepfold/engine';
import { afterAll, describe, expect, it } from 'vitest';
import { HEARTBEAT_MS, sync } from './fixtures/heartbeat-worker.mjs';
import { openTestStore, type TestStore, type TestStoreName } from './support/test-stores.js';
import { workerSet } from './support/worker-process.js';

// A dead worker's heartbeating task comes back in about two heartbeats, not at its timeout. A
// worker process runs a 60 s task with heartbeatMs 2000 (deadline 120 s), heartbeating every 250 ms,
// and is SIGKILLed about 10 s in; another worker process, idle, must run it again within
// 3 × heartbeatMs plus its poll interval (a third of heartbeatMs) of the kill, as attempt 2, with
// the details of a heartbeat the dead one sent shortly before it died.

const tag = `hb_${process.pid}`;
const RUN_BEFORE_KILL_MS = 10_000;
const POLL_MS = Math.floor(HEARTBEAT_MS / 3);
const WORKER = new URL('./fixtures/heartbeat-worker.mjs', import.meta.url);

interface Started {
  started: true;
  attempt: number;
  details: { tick: number } | null;
  pid: number;
}

const workerEnv = (db: TestStore, mode: 'work' | 'resume') => ({
  HB_STORE: db.name,
  HB_URL: db.url,
  HB_NS: db.namespace,
  HB_MODE: mode,
});

const opened: TestStore[] = [];
afterAll(async () => {
  for (const db of opened) await db.drop();
});

describe('a SIGKILLed worker’s heartbeating task (heartbeatMs 2000, deadline 120 s)', () => {
  for (const name of ['postgres', 'redis'] as TestStoreName[]) {
    it(`${name}: runs again in another worker within about two heartbeats, with the last details`, async () => {
      const db = openTestStore(name, tag, { poolMax: 2 });
      opened.push(db);
      const { store } = db;
      await store.setup();
      const workers = workerSet();
      try {
        const doomed = await workers.start(WORKER, workerEnv(db, 'work'));
        // This process only writes: the task is handed off, and the one worker up takes it.
        const api = createRunner({ store, workflows: [sync], execute: false });
        const first = doomed.next<Started>('started');
        const id = `sync-${name}`;
        await api.start('sync', id, {});
        expect((await first).attempt).toBe(1);
        let lastBeat = 0;
        doomed.each<{ beat: number }>('beat', (m) => {
          lastBeat = m.beat;
        });
        const t0 = Date.now();

        // The other worker is up and idle (nothing is due) before the kill.
        const rescuer = await workers.start(WORKER, workerEnv(db, 'resume'));
        const running = (await store.load(id))!;
        expect(running.tasks.pull).toMatchObject({ attempt: 1, heartbeatMs: HEARTBEAT_MS });
        expect(running.tasks.pull!.deadline).toBeGreaterThan(Date.now() + 100_000);
        await new Promise((r) => setTimeout(r, Math.max(0, RUN_BEFORE_KILL_MS - (Date.now() - t0))));
        const second = rescuer.next<Started>('started');
        const killedAt = Date.now();
        await doomed.kill();
        // Every heartbeat report it sent before it died has arrived by its exit.
        const beatAtKill = lastBeat;

        const again = await second;
        const took = Date.now() - killedAt;
        console.log(`${name}: a SIGKILLed worker's heartbeating task running again in ${took} ms`);
        expect(took).toBeLessThanOrEqual(3 * HEARTBEAT_MS + POLL_MS);
        expect(again.attempt).toBe(2);
        expect(again.pid).toBe(rescuer.pid);
        // A heartbeat sent shortly before the kill: written at most once per third of heartbeatMs.
        expect(beatAtKill).toBeGreaterThan(30);
        expect(again.details?.tick).toBeGreaterThan(beatAtKill - 8);
        expect(again.details?.tick).toBeLessThanOrEqual(beatAtKill + 1);

        await expect
          .poll(async () => (await store.load(id))?.status, { timeout: 10_000, interval: 200 })
          .toBe('completed');
        const done = (await store.load(id))!;
        expect(done.steps.pull?.output).toEqual({ resumedAt: again.details?.tick });
        expect(done.log.find((e) => e.type === 'task.failed')?.detail).toMatch(/^HEARTBEAT_TIMEOUT: /);
      } finally {
        await workers.stopAll();
      }
    }, 30_000);
  }
});
