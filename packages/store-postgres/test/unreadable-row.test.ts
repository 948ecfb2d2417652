import {
  createRunner,
  createWorker,
  defineWorkflow,
  isStepfoldError,
  type Snapshot,
  type Worker,
} from '@stepfold/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../src/index.js';
import { TEST_SCHEMA } from './server.js';
import { useTestTables } from './test-tables.js';

// One row whose stored snapshot cannot be read (torn by hand, or written by a tool gone wrong) must
// not stop a worker: before, the claim that returned it threw for the whole batch, and since the bad
// row is the earliest due it came back in every poll and nothing else ran. Now the worker reports it
// (an `error` event with INVALID_SNAPSHOT, `stats.unreadable`), leaves the row untouched, and runs
// the rest.

const { pool, table } = useTestTables('unread');

const pays = defineWorkflow({
  name: 'unreadable-pays',
  version: 1,
  start: 'pay',
  steps: { pay: { kind: 'task', handler: 'pay' } },
});
const waits = defineWorkflow({
  name: 'unreadable-waits',
  version: 1,
  start: 'go',
  steps: { go: { kind: 'wait', signal: 'go', next: 'pay' }, pay: { kind: 'task', handler: 'pay' } },
});

const until = async (what: string, ok: () => boolean | Promise<boolean>, ms = 20_000) => {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 20)))
    if (await ok()) return;
  throw new Error(`timed out waiting for ${what}`);
};

describe('a stored row that cannot be read (postgres)', () => {
  const workers: Worker[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 1000 })));
  });

  it('is reported and skipped by the worker; every other instance runs, the row stays as it was', async () => {
    const name = table();
    const store = createPostgresStore({ pool, schema: TEST_SCHEMA, table: name });
    await store.setup();
    const tear = async (id: string) => {
      await pool.query(
        `UPDATE "${TEST_SCHEMA}"."${name}" SET snapshot = NULL, snapshot_text = '{"id": "torn' WHERE id = $1`,
        [id],
      );
    };
    const rowOf = async (id: string) =>
      // Everything but the claim, which the polls that skip the row do take.
      (
        await pool.query(
          `SELECT version, status, wake_at, snapshot, snapshot_text FROM "${TEST_SCHEMA}"."${name}" WHERE id = $1`,
          [id],
        )
      ).rows[0];

    // Queued for any worker (no handler runs here), the torn ones first: they are the earliest due.
    const writer = createRunner({
      store,
      workflows: [pays, waits],
      handlers: { pay: () => null },
      execute: false,
    });
    await writer.start('unreadable-pays', 'torn-task', {});
    await writer.start('unreadable-waits', 'torn-inbox', {});
    const { workflow: w } = await writer.start('unreadable-waits', 'good-inbox', {});
    const good: string[] = [];
    for (let i = 0; i < 6; i++) {
      good.push(`good-${i}`);
      await writer.start('unreadable-pays', `good-${i}`, {});
    }
    const accept = [`${w.name}@${w.version}@${w.hash}`];
    const signal = { type: 'signal' as const, at: Date.now(), name: 'go', payload: null };
    expect(await store.inbox.send('torn-inbox', signal, accept)).toBe(true);
    expect(await store.inbox.send('good-inbox', signal, accept)).toBe(true);
    await tear('torn-task');
    await tear('torn-inbox');
    const tornBefore = [await rowOf('torn-task'), await rowOf('torn-inbox')];

    // Without the callback a claim still fails loudly, as every other read of that row does.
    await expect(store.claims.claimDue(Date.now(), 50, { leaseMs: 0 })).rejects.toSatisfy((e) =>
      isStepfoldError(e, 'INVALID_SNAPSHOT'),
    );

    const errors: unknown[] = [];
    const paid: string[] = [];
    const runner = createRunner({
      store,
      workflows: [pays, waits],
      handlers: {
        pay: ({ instanceId }) => {
          paid.push(instanceId);
          return null;
        },
      },
    });
    const worker = createWorker({ runner, concurrency: 2, on: { error: (e) => errors.push(e) } });
    workers.push(worker);
    await worker.start();
    const done = async (id: string) => ((await store.load(id)) as Snapshot).status === 'completed';
    await until('every readable instance to complete', async () => {
      for (const id of [...good, 'good-inbox']) if (!(await done(id))) return false;
      return true;
    });
    await until('the sent-signal lane to report the torn row too', () => worker.stats.unreadable >= 2);

    expect(paid.sort()).toEqual([...good, 'good-inbox'].sort());
    expect(worker.stats.unreadable).toBeGreaterThanOrEqual(2);
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(errors.every((e) => isStepfoldError(e, 'INVALID_SNAPSHOT'))).toBe(true);
    // Nothing was written over the torn rows.
    expect([await rowOf('torn-task'), await rowOf('torn-inbox')]).toEqual(tornBefore);
  });

  it('an instance that reads but cannot be stepped is reported once per claim lease, not every poll; the rest run', async () => {
    const name = table();
    const store = createPostgresStore({ pool, schema: TEST_SCHEMA, table: name });
    await store.setup();
    const writer = createRunner({ store, workflows: [pays], handlers: { pay: () => null }, execute: false });
    await writer.start('unreadable-pays', 'mangled', {});
    const good = ['fine-0', 'fine-1', 'fine-2', 'fine-3'];
    for (const id of good) await writer.start('unreadable-pays', id, {});
    // Valid JSON with its envelope intact (so every claim reads it), but a status no snapshot has:
    // the tick's check refuses it. Before, the worker gave its claim back and took it again in
    // every round, reporting it each time.
    const stored = (await store.load('mangled')) as Snapshot;
    await pool.query(
      `UPDATE "${TEST_SCHEMA}"."${name}" SET snapshot = NULL, snapshot_text = $2 WHERE id = $1`,
      ['mangled', JSON.stringify({ ...stored, status: 'bogus' })],
    );

    const errors: Array<{ error: unknown; where: string }> = [];
    const runner = createRunner({ store, workflows: [pays], handlers: { pay: () => null } });
    const worker = createWorker({
      runner,
      concurrency: 2,
      claimLeaseMs: 60_000,
      poll: { minMs: 10, maxMs: 50, maxWithWakesMs: 50 },
      on: { error: (error, where) => errors.push({ error, where }) },
    });
    workers.push(worker);
    await worker.start();
    const done = async (id: string) => ((await store.load(id)) as Snapshot).status === 'completed';
    await until('every other instance to complete', async () => {
      for (const id of good) if (!(await done(id))) return false;
      return true;
    });
    const polls = worker.stats.polls;
    await until('twenty more polls', () => worker.stats.polls >= polls + 20);

    expect(worker.stats.unreadable).toBe(1);
    expect(errors.map((e) => [e.where, isStepfoldError(e.error, 'INVALID_SNAPSHOT')])).toEqual([
      ['tick', true],
    ]);
    expect(((await store.load('mangled')) as Snapshot).version).toBe(stored.version);
  });
});
