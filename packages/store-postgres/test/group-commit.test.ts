import type { Snapshot, WakeNotice } from '@stepfold/engine';
import { makeTestSnapshot } from '@stepfold/engine';
import { runStoreConformance } from '@stepfold/engine/conformance';
import { describe, expect, it } from 'vitest';
import { createPostgresStore, type PostgresStore, type SnapshotColumn } from '../src/index.js';
import { recordingPool, TEST_SCHEMA } from './server.js';
import { useTestTables } from './test-tables.js';

// The same store with `groupCommit: true`: the shared conformance suite, then what only batches do.
const { pool, table, store: freshStore } = useTestTables('g');

runStoreConformance({
  name: 'postgres (group commit, jsonb column)',
  // useTestTables drops every table it named after the file. The plain suite covers the text column.
  createStore: () =>
    createPostgresStore({
      pool,
      schema: TEST_SCHEMA,
      table: table(),
      groupCommit: true,
      snapshotColumn: 'jsonb',
    }),
  capabilities: ['claims', 'inbox', 'wakes', 'flow', 'stream'],
});

const wf = { name: 'g', version: 1, hash: 'h' };
const snap = (id: string, patch: Partial<Snapshot> = {}) => makeTestSnapshot(id, { workflow: wf, ...patch });
const next = (s: Snapshot, patch: Partial<Snapshot> = {}): Snapshot => ({
  ...s,
  version: s.version + 1,
  ...patch,
});

/** A group-commit store on a fresh table whose pool records every statement's text. */
async function spied(texts: string[], snapshotColumn: SnapshotColumn = 'text'): Promise<PostgresStore> {
  const base = await freshStore();
  const spy = recordingPool(pool, (q) => texts.push(q.text));
  return createPostgresStore({
    pool: spy,
    schema: TEST_SCHEMA,
    table: base.table,
    groupCommit: true,
    snapshotColumn,
  });
}

const isBatch = (text: string) => text.startsWith('WITH v ');

describe('postgres group commit', () => {
  it.each(['text', 'jsonb'] as const)(
    '40 concurrent saves go in a few statements, each row written with its own version (%s column)',
    async (column) => {
      const texts: string[] = [];
      const store = await spied(texts, column);
      const first = Array.from({ length: 40 }, (_, k) => snap(`i${k}`, { input: { k } }));
      for (const s of first) await store.create(s);
      texts.length = 0;
      await Promise.all(first.map((s) => store.save(next(s, { input: { k: -1 } }), s.version)));
      const saves = texts.filter((t) => t.startsWith('UPDATE') || isBatch(t));
      expect(saves.length).toBeLessThanOrEqual(3); // one alone, then the rest together
      expect(saves.some(isBatch)).toBe(true);
      for (const s of first) {
        const stored = await store.load(s.id);
        expect(stored?.version).toBe(s.version + 1);
        expect(stored?.input).toEqual({ k: -1 });
      }
    },
  );

  it('in one statement, a stale version is VERSION_CONFLICT, a missing row NOT_FOUND, the others written', async () => {
    const texts: string[] = [];
    const store = await spied(texts);
    const rows = ['a', 'b', 'c', 'd'].map((id) => snap(id));
    for (const s of rows) await store.create(s);
    const [a, b, c, d] = rows as [Snapshot, Snapshot, Snapshot, Snapshot];
    await store.save(next(c), c.version); // c moves on: the save below expects its old version
    texts.length = 0;
    const results = await Promise.allSettled([
      store.save(next(a), a.version), // goes alone; the rest wait for it and go together
      store.save(next(b), b.version),
      store.save(next(c), c.version),
      store.save(next(snap('missing')), 1),
      store.save(next(d), d.version),
    ]);
    expect(texts.filter(isBatch)).toHaveLength(1);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
    ]);
    expect((results[2] as PromiseRejectedResult).reason).toMatchObject({ code: 'VERSION_CONFLICT' });
    expect((results[3] as PromiseRejectedResult).reason).toMatchObject({ code: 'NOT_FOUND' });
    expect((await store.load('b'))?.version).toBe(b.version + 1);
    expect((await store.load('c'))?.version).toBe(c.version + 1);
    expect((await store.load('d'))?.version).toBe(d.version + 1);
  });

  it('two racing saves of one instance never share a statement: exactly one wins', async () => {
    const store = await freshStore({ groupCommit: true });
    const others = ['o1', 'o2'].map((id) => snap(id));
    const s = snap('raced');
    for (const x of [...others, s]) await store.create(x);
    const results = await Promise.allSettled([
      store.save(next(others[0]!), 1),
      store.save(next(s, { input: { by: 'one' } }), s.version),
      store.save(next(s, { input: { by: 'two' } }), s.version),
      store.save(next(others[1]!), 1),
    ]);
    const raced = results.slice(1, 3);
    expect(raced.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const lost = raced.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason).toMatchObject({ code: 'VERSION_CONFLICT' });
    const winner = raced[0]!.status === 'fulfilled' ? 'one' : 'two';
    expect((await store.load('raced'))?.input).toEqual({ by: winner });
    expect(results[3]!.status).toBe('fulfilled');
  });

  it.each(['text', 'jsonb'] as const)(
    'batched writes send their wake notices (only the rows written), and a NUL snapshot saves (%s column)',
    async (column) => {
      const texts: string[] = [];
      const store = await spied(texts, column);
      const timers = ['t1', 't2', 't3'].map((id) => snap(id));
      const odd = snap('nul', { input: { s: 'a\u0000b' } }); // JSONB refuses NUL: the text column
      for (const s of [...timers, odd]) await store.create(s);
      const hints: WakeNotice[] = [];
      const sub = await store.wakes.subscribe({ wake: (h) => void hints.push(h), lost() {}, restored() {} });
      try {
        texts.length = 0;
        const at = (k: number) => 1_000 + k;
        const results = await Promise.allSettled([
          store.save(next(odd, { input: { s: 'c\u0000d' } }), odd.version),
          ...timers.map((s, k) =>
            store.save(
              next(s, { wakeAt: at(k), timers: [{ kind: 'sleep', step: 'a', at: at(k) }] }),
              s.version,
            ),
          ),
          // A stale timer save: its row is not written and it announces nothing.
          store.save(next(timers[0]!, { wakeAt: 5, timers: [{ kind: 'sleep', step: 'a', at: 5 }] }), 99),
        ]);
        expect(results.map((r) => r.status)).toEqual([
          'fulfilled',
          'fulfilled',
          'fulfilled',
          'fulfilled',
          'rejected',
        ]);
        expect(texts.some(isBatch)).toBe(true);
        const deadline = Date.now() + 5_000;
        while (hints.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
        await new Promise((r) => setTimeout(r, 100)); // room for a wrong extra notice to arrive
        expect(hints.map((h) => h.id).sort()).toEqual(['t1', 't2', 't3']);
        expect(hints.find((h) => h.id === 't2')).toEqual({ at: 1_001, workflow: 'g', id: 't2' });
        expect((await store.load('nul'))?.input).toEqual({ s: 'c\u0000d' });
      } finally {
        await sub.close();
      }
    },
  );
});
