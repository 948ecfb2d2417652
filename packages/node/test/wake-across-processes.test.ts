import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { createRunner, type Store } from '@stepfold/engine';
import { createPostgresStore } from '@stepfold/store-postgres';
import { createRedisStore } from '@stepfold/store-redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { waiter } from './fixtures/wake-worker.mjs';

// A signal written by one process wakes a waiting instance in another, with no
// polling in between. The worker process polls once at start and then sleeps ten minutes; the
// test writes the signal from this process through a runner that hands its tasks off, and the
// handler must run in the worker process with the worker's poll count unchanged but for the one
// round the wake notice started. How fast is the bench's business (`pnpm bench wake-latency`).

const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';
const REDIS_URL = process.env.STEPFOLD_REDIS_URL ?? 'redis://127.0.0.1:6379';
const tag = `s18_${process.pid}`;

interface Case {
  name: 'postgres' | 'redis';
  url: string;
  namespace: string;
  open(): { store: Store; close(): Promise<void> };
}

const cases: Case[] = [
  {
    name: 'postgres',
    url: PG_URL,
    namespace: tag,
    open() {
      const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
      return { store: createPostgresStore({ pool, schema: tag }), close: () => pool.end() };
    },
  },
  {
    name: 'redis',
    url: REDIS_URL,
    namespace: `stepfold:{${tag}}:`,
    open() {
      const client = new Redis(REDIS_URL);
      return {
        store: createRedisStore({ client, prefix: `stepfold:{${tag}}:` }),
        close: async () => client.disconnect(),
      };
    },
  },
];

/** The next IPC message from `child` that has `key`. */
function next<T>(child: ChildProcess, key: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const on = (m: Record<string, unknown>) => {
      if (!(key in m)) return;
      child.off('message', on);
      resolve(m as T);
    };
    child.on('message', on);
    child.once('exit', (code) => reject(new Error(`worker process exited (${code}) before sending ${key}`)));
  });
}

afterAll(async () => {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS "${tag}" CASCADE`);
  await admin.end();
});

describe('a signal from one process wakes a worker in another, no polling between', () => {
  for (const c of cases) {
    it(c.name, async () => {
      const { store, close } = c.open();
      await store.setup();
      const child = fork(new URL('./fixtures/wake-worker.mjs', import.meta.url), [], {
        env: { ...process.env, WAKE_STORE: c.name, WAKE_URL: c.url, WAKE_NAMESPACE: c.namespace },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      try {
        const ready = await next<{ polls: number }>(child, 'ready');
        // This process only writes: its tasks are handed off to whichever worker takes them.
        const api = createRunner({
          store,
          workflows: [waiter],
          handlers: { hit: () => 'here' },
          execute: false,
        });
        const id = `${c.name}-waiting`;
        const started = await api.start('waiter', id);
        expect(started.status).toBe('waiting');
        const hit = next<{ hit: string; polls: number; wakes: number }>(child, 'hit');
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
        child.send('stop');
        await once(child, 'exit');
        await close();
      }
    });
  }
});
