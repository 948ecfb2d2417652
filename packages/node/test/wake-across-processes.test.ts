import { createRunner } from '@stepfold/engine';
import { afterAll, describe, expect, it } from 'vitest';
import { waiter } from './fixtures/wake-worker.mjs';
import { openTestStore, type TestStore, type TestStoreName } from './support/test-stores.js';
import { workerSet } from './support/worker-process.js';

// A signal written by one process wakes a waiting instance in another, with no
// polling in between. The worker process polls once at start and then sleeps ten minutes; the
// test writes the signal from this process through a runner that hands its tasks off, and the
// handler must run in the worker process with the worker's poll count unchanged but for the one
// round the wake notice started. How fast is the bench's business (`pnpm bench wake-latency`).

const tag = `s18_${process.pid}`;
const WORKER = new URL('./fixtures/wake-worker.mjs', import.meta.url);

const opened: TestStore[] = [];
afterAll(async () => {
  for (const db of opened) await db.drop();
});

describe('a signal from one process wakes a worker in another, no polling between', () => {
  for (const name of ['postgres', 'redis'] as TestStoreName[]) {
    it(name, async () => {
      const db = openTestStore(name, tag, { poolMax: 2 });
      opened.push(db);
      const { store } = db;
      await store.setup();
      const workers = workerSet();
      const child = workers.fork(WORKER, {
        WAKE_STORE: name,
        WAKE_URL: db.url,
        WAKE_NAMESPACE: db.namespace,
      });
      try {
        const ready = await child.next<{ polls: number }>('ready');
        // This process only writes: its tasks are handed off to whichever worker takes them.
        const api = createRunner({
          store,
          workflows: [waiter],
          handlers: { hit: () => 'here' },
          execute: false,
        });
        const id = `${name}-waiting`;
        const started = await api.start('waiter', id);
        expect(started.status).toBe('waiting');
        const hit = child.next<{ hit: string; polls: number; wakes: number }>('hit');
        const signalled = await api.signal(id, 'go', { from: process.pid }, { wait: 'write' });
        expect(signalled.tasks.hit).toMatchObject({ queued: true });
        const seen = await hit;
        expect(seen.hit).toBe(id);
        // No poll before it, and none for it: the notice of the signal's write carried the
        // snapshot, and the worker's one query was the write that took the task.
        expect(seen.polls).toBe(ready.polls);
        expect(seen.wakes).toBeGreaterThanOrEqual(1);
        await expect.poll(async () => (await store.load(id))?.status, { timeout: 10_000 }).toBe('completed');
        const done = (await store.load(id))!;
        expect(done.steps.hit?.output).toBe('hit');
        expect(done.log.some((e) => e.type === 'task.taken')).toBe(true);
      } finally {
        await workers.stopAll();
      }
    });
  }
});
