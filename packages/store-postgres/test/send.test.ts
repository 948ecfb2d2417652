import {
  createRunner,
  createWorker,
  defineWorkflow,
  isStepfoldError,
  makeTestSnapshot,
  type WakeNotice,
  type Worker,
} from '@stepfold/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { createPostgresStore, type PostgresStore } from '../src/index.js';
import { recordingPool, TEST_SCHEMA } from './server.js';
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

  it('inbox.send is one statement: the append and its NOTIFY, with the snapshot and every signal waiting', async () => {
    const base = await freshStore();
    const texts: string[] = [];
    const spy = recordingPool(pool, (q) => texts.push(q.text));
    const store = createPostgresStore({
      pool: spy,
      schema: TEST_SCHEMA,
      table: base.table,
    });
    const wf = { name: 'w', version: 2, hash: 'h' };
    const stored = makeTestSnapshot('one', { workflow: wf, status: 'waiting', input: { nul: 'a\u0000b' } });
    await store.create(stored);
    const hints: WakeNotice[] = [];
    const sub = await store.wakes.subscribe({ wake: (h) => void hints.push(h) });
    try {
      texts.length = 0;
      const event = (n: number) => ({ type: 'signal' as const, at: 5, name: 'go', payload: { n } });
      // The definition is the row's own column: a snapshot JSONB could not parse (NUL) takes signals too.
      expect(await store.inbox.send('one', event(1), ['w@2@h'])).toBe(true);
      expect(await store.inbox.send('one', event(2), ['w@1@h', 'w@2@h'])).toBe(true);
      expect(await store.inbox.send('one', event(3), ['w@1@h'])).toBe(false);
      expect(texts).toHaveLength(3);
      for (const text of texts) expect(text).toMatch(/INSERT INTO .*\$sent.*pg_notify/s);
      for (let i = 0; i < 200 && hints.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      const seqs = (await store.inbox.claim(0, 1, ['one']))[0]!.sent.map((p) => p.seq);
      expect(hints).toEqual([
        { at: 5, workflow: 'w', id: 'one', snapshot: stored, sent: [{ seq: seqs[0], event: event(1) }] },
        {
          at: 5,
          workflow: 'w',
          id: 'one',
          snapshot: stored,
          sent: [
            { seq: seqs[0], event: event(1) },
            { seq: seqs[1], event: event(2) },
          ],
        },
      ]);
      expect(seqs[0]).toBeLessThan(seqs[1]!);
    } finally {
      await sub.close();
    }
  });

  it('inbox.send refused for a finished instance answers its status from the same statement', async () => {
    const base = await freshStore();
    const texts: string[] = [];
    const spy = recordingPool(pool, (q) => texts.push(q.text));
    const store = createPostgresStore({
      pool: spy,
      schema: TEST_SCHEMA,
      table: base.table,
    });
    const workflow = { name: 'w', version: 1, hash: 'h' };
    await store.create(makeTestSnapshot('done', { workflow, status: 'cancelled' }));
    const event = { type: 'signal' as const, at: 5, name: 'go' };
    texts.length = 0;
    expect(await store.inbox.send('done', event, ['w@1@h'])).toBe('cancelled');
    // Another definition or a missing instance: refused without a reason (the runner's path reads).
    expect(await store.inbox.send('done', event, ['w@2@h'])).toBe(false);
    expect(await store.inbox.send('missing', event, ['w@1@h'])).toBe(false);
    expect(texts).toHaveLength(3);
    expect(await inboxRows(store)).toBe(0);
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
