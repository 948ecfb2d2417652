import { createHash } from 'node:crypto';
import type { Snapshot, WakeNotice, WorkflowEvent } from '@stepfold/engine';
import { makeTestSnapshot } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { createPostgresStore, type PostgresStore, type PostgresStoreOptions } from '../src/index.js';
import { recordingPool, TEST_SCHEMA } from './server.js';
import { useTestTables } from './test-tables.js';

// A save matching a snapshot (a wake notice's), as only PostgreSQL shows it: one statement, the
// stored text compared by sha256 in SQL, a JSONB row compared as JSONB by a jsonb store.

const { pool, table, store: freshStore } = useTestTables('mt');

const wf = { name: 'mt', version: 1, hash: 'h' };
const snap = (id: string, patch: Partial<Snapshot> = {}): Snapshot =>
  makeTestSnapshot(id, { workflow: wf, status: 'waiting', ...patch });
const next = (s: Snapshot): Snapshot => ({ ...s, version: s.version + 1, input: 'next' });
const signal = (said: string): WorkflowEvent => ({ type: 'signal', at: 1, name: 'go', payload: { said } });

/** A store on `on` (a fresh table unless given) whose pool records every statement with its values. */
function spied(seen: Array<{ text: string; values: unknown[] }>, o: Partial<PostgresStoreOptions> = {}) {
  const spy = recordingPool(pool, (q) => seen.push(q));
  return createPostgresStore({ table: table(), ...o, pool: spy, schema: TEST_SCHEMA });
}

/** Collects the notices of `store` until `close`. */
async function notices(store: PostgresStore) {
  const hints: WakeNotice[] = [];
  const sub = await store.wakes.subscribe({ wake: (h) => void hints.push(h) });
  const until = async (n: number) => {
    for (let i = 0; i < 400 && hints.length < n; i++) await new Promise((r) => setTimeout(r, 20));
    return hints;
  };
  return { until, close: () => sub.close() };
}

describe('postgres save matching a snapshot', () => {
  it('is one statement comparing the sha256 of the stored text and consumed signals; the JSON is not sent again', async () => {
    const seen: Array<{ text: string; values: unknown[] }> = [];
    const store = spied(seen);
    await store.setup();
    const stored = snap('one', { input: { text: 'é and 😀' } });
    await store.create(stored);
    await store.inbox.send('one', signal('a'), ['mt@1@h']);
    await store.inbox.send('one', signal('b'), ['mt@1@h']);
    const [waiting] = await store.inbox.claim(0, 1, ['one']);
    seen.length = 0;
    await store.save(next(stored), 1, { consumed: waiting!.sent, matches: stored });
    expect(seen).toHaveLength(1);
    const [{ text, values }] = seen as [{ text: string; values: unknown[] }];
    expect(text).toContain('sha256(convert_to(snapshot_text');
    expect(text).toMatch(/DELETE FROM .*\$sent/);
    // $12 the seqs, $13 the digest as bytes (of the JSON and "\n" + each signal); a text store sends
    // no JSON and no CASE (a bare comparison keeps the prepared generic plan).
    const expected = [JSON.stringify(stored), ...waiting!.sent.map((s) => JSON.stringify(s.event))].join(
      '\n',
    );
    expect(text).not.toContain('CASE');
    expect(values.slice(11, 13)).toEqual([
      waiting!.sent.map((s) => s.seq),
      createHash('sha256').update(expected, 'utf8').digest(),
    ]);
    expect(values).toHaveLength(13);
    expect(await store.inbox.claim(0, 1, ['one'])).toEqual([]);
    expect((await store.load('one'))?.input).toBe('next');
  });

  it('compares the signals in the order consumed: another order is a mismatch', async () => {
    const store = await freshStore();
    const stored = snap('order');
    await store.create(stored);
    for (const said of ['a', 'b']) await store.inbox.send('order', signal(said), ['mt@1@h']);
    const [waiting] = await store.inbox.claim(0, 1, ['order']);
    const swapped = waiting!.sent.map((s, i, all) => ({ seq: s.seq, event: all[1 - i]!.event }));
    await expect(store.save(next(stored), 1, { consumed: swapped, matches: stored })).rejects.toMatchObject({
      code: 'NOTICE_MISMATCH',
    });
    await store.save(next(stored), 1, { consumed: waiting!.sent, matches: stored });
    expect((await store.load('order'))?.version).toBe(2);
  });

  it('a jsonb store compares a JSONB row as JSONB and a text row by digest; a text store refuses a JSONB row', async () => {
    const jsonb = await freshStore({ snapshotColumn: 'jsonb' });
    const stored = snap('jb', { input: { b: 1, a: [1.5, 'x'] } });
    const nul = snap('nul', { input: 'a\u0000b' }); // JSONB cannot hold it: the text column
    for (const s of [stored, nul]) await jsonb.create(s);
    await expect(
      jsonb.save(next(stored), 1, { matches: { ...stored, input: { b: 2, a: [1.5, 'x'] } } }),
    ).rejects.toMatchObject({ code: 'NOTICE_MISMATCH' });
    await expect(jsonb.save(next(nul), 1, { matches: { ...nul, input: 'a\u0000c' } })).rejects.toMatchObject({
      code: 'NOTICE_MISMATCH',
    });
    await jsonb.save(next(nul), 1, { matches: (await jsonb.load('nul'))! });
    // A text store finds no text to compare in a JSONB row (its notices never carry one).
    const text = createPostgresStore({ pool, schema: TEST_SCHEMA, table: jsonb.table });
    await expect(text.save(next(stored), 1, { matches: stored })).rejects.toMatchObject({
      code: 'NOTICE_MISMATCH',
    });
    await jsonb.save(next(stored), 1, { matches: (await jsonb.load('jb'))! });
    expect((await text.load('jb'))?.version).toBe(2);
  });

  it('a jsonb store’s notices carry no snapshot from a JSONB row: a hand-off and a send are announced bare', async () => {
    const store = await freshStore({ snapshotColumn: 'jsonb' });
    const heard = await notices(store);
    try {
      const queued = {
        step: 'a',
        phase: 'run' as const,
        attempt: 1,
        idempotencyKey: 'k',
        handler: 'h',
        dispatchedAt: 0,
        deadline: 50,
        dispatchVersion: 1,
        queued: true,
      };
      await store.create(snap('handed', { wakeAt: 50, tasks: { 'a:run': queued } }));
      await store.create(snap('sent'));
      await store.inbox.send('sent', signal('x'), ['mt@1@h']);
      expect(await heard.until(2)).toEqual([
        { at: 50, workflow: 'mt', id: 'handed' },
        { at: 1, workflow: 'mt', id: 'sent', sent: [] },
      ]);
    } finally {
      await heard.close();
    }
  });

  it('in group commit, a matched save goes in a statement of its own', async () => {
    const seen: Array<{ text: string; values: unknown[] }> = [];
    const store = spied(seen, { groupCommit: true });
    await store.setup();
    const rows = ['g1', 'g2', 'g3'].map((id) => snap(id));
    for (const s of rows) await store.create(s);
    seen.length = 0;
    await Promise.all([
      store.save(next(rows[0]!), 1), // goes alone; the other two wait for it
      store.save(next(rows[1]!), 1, { matches: rows[1]! }),
      store.save(next(rows[2]!), 1),
    ]);
    const matched = seen.filter((q) => q.text.includes('sha256'));
    expect(matched).toHaveLength(1);
    expect(matched[0]!.values[0]).toBe('g2');
    for (const s of rows) expect((await store.load(s.id))?.version).toBe(2);
  });
});
