import { createRunner, defineWorkflow, isStepfoldError } from '@stepfold/engine';
import { createWorker, type Worker } from '@stepfold/engine/worker';
import { afterEach, describe, expect, it } from 'vitest';
import type { PostgresStore } from '../src/index.js';
import { TEST_SCHEMA } from './server.js';
import { useTestTables } from './test-tables.js';

// What only PostgreSQL's inbox table can show; everything runner.send promises on any store with
// an inbox runs in the conformance suite (postgres.test.ts, group-commit.test.ts).

const { pool, store: freshStore } = useTestTables('snd');

const waits = defineWorkflow({
  name: 'send-waits',
  version: 1,
  start: 'go',
  steps: {
    go: { kind: 'wait', signal: 'go', next: 'hit' },
    hit: { kind: 'task', handler: 'hit' },
  },
});

const inboxRows = async (store: PostgresStore) =>
  Number((await pool.query(`SELECT count(*) AS n FROM "${TEST_SCHEMA}"."${store.table}$sent"`)).rows[0].n);

const until = async (what: string, ok: () => boolean | Promise<boolean>, ms = 10_000) => {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 20)))
    if (await ok()) return;
  throw new Error(`timed out waiting for ${what}`);
};

describe('postgres runner.send', () => {
  const workers: Worker[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 1000 })));
  });

  it('a sent signal the instance refuses when applied is dropped and reported, not retried for ever', async () => {
    const store = await freshStore();
    const sender = createRunner({ store, workflows: [waits], handlers: { hit: () => null }, execute: false });
    await sender.start('send-waits', 'u');
    // Written by hand: `send` itself refuses a name no step listens for.
    await pool.query(
      `INSERT INTO "${TEST_SCHEMA}"."${store.table}$sent" (id, event, due_at) VALUES ($1, $2, 0)`,
      ['u', JSON.stringify({ type: 'signal', at: Date.now(), name: 'nope' })],
    );
    const errors: string[] = [];
    const runner = createRunner({ store, workflows: [waits], handlers: { hit: () => null } });
    const worker = createWorker({
      runner,
      wakes: false,
      poll: { minMs: 50, maxMs: 200 },
      on: { error: (e) => errors.push(isStepfoldError(e) ? e.code : String(e)) },
    });
    workers.push(worker);
    await worker.start();
    await until('the inbox emptied', async () => (await inboxRows(store)) === 0, 5_000);
    expect(errors).toEqual(['UNKNOWN_SIGNAL']);
    const s = await store.load('u');
    expect([s?.status, s?.version]).toEqual(['waiting', 1]);
  });
});
