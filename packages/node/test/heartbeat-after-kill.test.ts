import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { createRunner, type Store } from '@stepfold/engine';
import { createPostgresStore } from '@stepfold/store-postgres';
import { createRedisStore } from '@stepfold/store-redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { HEARTBEAT_MS, sync } from './fixtures/heartbeat-worker.mjs';

// A dead worker's heartbeating task comes back in about two heartbeats, not at its timeout. A
// worker process runs a 60 s task with heartbeatMs 2000 (deadline 120 s), heartbeating every 250 ms,
// and is SIGKILLed about 10 s in; another worker process, idle, must run it again within
// 3 × heartbeatMs plus its poll interval (a third of heartbeatMs) of the kill, as attempt 2, with
// the details of a heartbeat the dead one sent shortly before it died.

const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';
const REDIS_URL = process.env.STEPFOLD_REDIS_URL ?? 'redis://127.0.0.1:6379';
const tag = `hb_${process.pid}`;
const RUN_BEFORE_KILL_MS = 10_000;
const POLL_MS = Math.floor(HEARTBEAT_MS / 3);

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

interface Started {
  started: true;
  attempt: number;
  details: { tick: number } | null;
  pid: number;
}

function spawnWorker(c: Case, mode: 'work' | 'resume'): ChildProcess {
  return fork(new URL('./fixtures/heartbeat-worker.mjs', import.meta.url), [], {
    env: { ...process.env, HB_STORE: c.name, HB_URL: c.url, HB_NS: c.namespace, HB_MODE: mode },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** The next IPC message from `child` that has `key`. */
function next<T>(child: ChildProcess, key: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const on = (m: Record<string, unknown>) => {
      if (!(key in m)) return;
      child.off('message', on);
      resolve(m as T);
    };
    child.on('message', on);
    child.once('exit', (code, signal) =>
      reject(new Error(`worker process exited (${code ?? signal}) before sending ${key}`)),
    );
  });
}

afterAll(async () => {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS "${tag}" CASCADE`);
  await admin.end();
});

describe('a SIGKILLed worker’s heartbeating task (heartbeatMs 2000, deadline 120 s)', () => {
  for (const c of cases) {
    it(`${c.name}: runs again in another worker within about two heartbeats, with the last details`, async () => {
      const { store, close } = c.open();
      await store.setup();
      const doomed = spawnWorker(c, 'work');
      let rescuer: ChildProcess | undefined;
      try {
        await next(doomed, 'ready');
        // This process only writes: the task is handed off, and the one worker up takes it.
        const api = createRunner({ store, workflows: [sync], execute: false });
        const first = next<Started>(doomed, 'started');
        const id = `sync-${c.name}`;
        await api.start('sync', id, {});
        expect((await first).attempt).toBe(1);
        let lastBeat = 0;
        doomed.on('message', (m: { beat?: number }) => {
          if (m.beat !== undefined) lastBeat = m.beat;
        });
        const t0 = Date.now();

        // The other worker is up and idle (nothing is due) before the kill.
        rescuer = spawnWorker(c, 'resume');
        await next(rescuer, 'ready');
        const running = (await store.load(id))!;
        expect(running.tasks.pull).toMatchObject({ attempt: 1, heartbeatMs: HEARTBEAT_MS });
        expect(running.tasks.pull!.deadline).toBeGreaterThan(Date.now() + 100_000);
        await new Promise((r) => setTimeout(r, Math.max(0, RUN_BEFORE_KILL_MS - (Date.now() - t0))));
        const second = next<Started>(rescuer, 'started');
        doomed.kill('SIGKILL');
        const killedAt = Date.now();
        await once(doomed, 'exit');
        // Every heartbeat report it sent before it died has arrived by its exit.
        const beatAtKill = lastBeat;

        const again = await second;
        const took = Date.now() - killedAt;
        console.log(`${c.name}: a SIGKILLed worker's heartbeating task running again in ${took} ms`);
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
        if (doomed.exitCode === null && doomed.signalCode === null) doomed.kill('SIGKILL');
        if (rescuer && rescuer.exitCode === null) {
          rescuer.send('stop');
          await once(rescuer, 'exit');
        }
        await close();
      }
    }, 30_000);
  }
});
