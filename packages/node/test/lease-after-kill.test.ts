import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { composition, createRunner } from '@stepfold/engine';
import { createPostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { batch } from './fixtures/lease-worker.mjs';

// A dead worker's running tasks come back in seconds, not at their deadline. A worker process
// takes a map's 20 items (deadline 300 s each) and is SIGKILLed while they run; another worker
// process, polling at its idle pace, must have all 20 running again within 15 s: their leases
// (the default 10 s) lapse with nobody renewing them, and its due poll retries each as attempt 2.

const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';
const SCHEMA = `lease_${process.pid}`;
const ITEMS = 20;

interface Started {
  started: string;
  item: number;
  attempt: number;
  pid: number;
}

function spawnWorker(mode: 'hang' | 'finish'): ChildProcess {
  return fork(new URL('./fixtures/lease-worker.mjs', import.meta.url), [], {
    env: { ...process.env, LEASE_URL: PG_URL, LEASE_SCHEMA: SCHEMA, LEASE_MODE: mode },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** Resolves once `child` sent `n` start reports (collected into `into`), with the time of the last. */
function starts(child: ChildProcess, n: number, into: Started[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const on = (m: Record<string, unknown>) => {
      if (!('started' in m)) return;
      into.push(m as unknown as Started);
      if (into.length === n) {
        child.off('message', on);
        resolve(Date.now());
      }
    };
    child.on('message', on);
    child.once('exit', (code, signal) =>
      reject(new Error(`worker exited (${code ?? signal}) after ${into.length} of ${n} starts`)),
    );
  });
}

function ready(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    const on = (m: Record<string, unknown>) => {
      if (!('ready' in m)) return;
      child.off('message', on);
      resolve();
    };
    child.on('message', on);
    child.once('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready`)));
  });
}

afterAll(async () => {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await admin.end();
});

describe('a SIGKILLed worker', () => {
  it('has its 20 running map items (deadline 300 s) running again in another worker within 15 s', async () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
    const store = createPostgresStore({ pool, schema: SCHEMA });
    await store.setup();
    const doomed = spawnWorker('hang');
    let rescuer: ChildProcess | undefined;
    try {
      await ready(doomed);
      // This process only writes: the items are handed off, and the one worker up takes them all.
      const api = createRunner({ store, workflows: [batch], kinds: [composition], execute: false });
      const first: Started[] = [];
      const allFirst = starts(doomed, ITEMS, first);
      await api.start('batch', 'batch-1', { xs: Array.from({ length: ITEMS }, (_, i) => i) });
      await allFirst;
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
      rescuer = spawnWorker('finish');
      await ready(rescuer);
      const second: Started[] = [];
      const allSecond = starts(rescuer, ITEMS, second);
      doomed.kill('SIGKILL');
      const killedAt = Date.now();
      await once(doomed, 'exit');

      const back = await allSecond;
      const took = back - killedAt;
      console.log(`20 items of a SIGKILLed worker running again in ${took} ms`);
      expect(took).toBeLessThan(15_000);
      // The same items, keys and next attempt, each once, in the other process.
      expect(second.map((m) => m.started).sort()).toEqual(first.map((m) => m.started).sort());
      expect(second.every((m) => m.attempt === 2 && m.pid === rescuer!.pid)).toBe(true);
      await expect
        .poll(async () => (await store.load('batch-1'))?.status, { timeout: 10_000, interval: 200 })
        .toBe('completed');
      const done = (await store.load('batch-1'))!;
      expect(done.steps.items?.map?.ok).toBe(ITEMS);
    } finally {
      if (doomed.exitCode === null && doomed.signalCode === null) doomed.kill('SIGKILL');
      if (rescuer && rescuer.exitCode === null) {
        rescuer.send('stop');
        await once(rescuer, 'exit');
      }
      await pool.end();
    }
  }, 45_000);
});
