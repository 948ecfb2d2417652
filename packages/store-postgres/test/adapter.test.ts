import { isStepfoldError, makeTestSnapshot, type Snapshot, StoreUnavailableError } from '@stepfold/engine';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresStore, MAX_SNAPSHOT_BYTES_LIMIT } from '../src/index.js';
import { TEST_SCHEMA, testPool, uniqueTable } from './server.js';
import { useTestTables } from './test-tables.js';

const { pool, table: freshTable, store: freshStore } = useTestTables('a');

/** A new, set-up store on its own table. */
const fresh = (options: { claimMs?: number; maxSnapshotBytes?: number } = {}) => freshStore(options);

/** A test snapshot of workflow `wf`. */
function snapshot(id: string, patch: Partial<Snapshot> = {}): Snapshot {
  return makeTestSnapshot(id, { workflow: { name: 'wf', version: 1, hash: 'h' }, ...patch });
}

describe('postgres setup', () => {
  it('migrates once, also when run twice and concurrently, creating the schema', async () => {
    const schema = `m_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    try {
      const stores = ['one', 'two'].map((table) => createPostgresStore({ pool, schema, table }));
      await Promise.all([...stores, ...stores, ...stores].map((s) => s.setup()));
      await stores[0]!.setup();
      const rows = await pool.query(
        `SELECT table_name, version FROM "${schema}".stepfold_migrations ORDER BY table_name, version`,
      );
      expect(rows.rows).toEqual([
        { table_name: 'one', version: 1 },
        { table_name: 'one', version: 2 },
        { table_name: 'one', version: 3 },
        { table_name: 'one', version: 4 },
        { table_name: 'one', version: 5 },
        { table_name: 'one', version: 6 },
        { table_name: 'one', version: 7 },
        { table_name: 'two', version: 1 },
        { table_name: 'two', version: 2 },
        { table_name: 'two', version: 3 },
        { table_name: 'two', version: 4 },
        { table_name: 'two', version: 5 },
        { table_name: 'two', version: 6 },
        { table_name: 'two', version: 7 },
      ]);
    } finally {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });

  it('creates the due, status and workflow indexes, and listDue can use the due one', async () => {
    const store = await fresh();
    const r = await pool.query<{ indexname: string; indexdef: string }>(
      'SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2',
      [TEST_SCHEMA, store.table],
    );
    const defs = Object.fromEntries(
      r.rows.map((x) => [x.indexname.slice(store.table.length + 1), x.indexdef]),
    );
    expect(defs.due_at).toMatch(
      /\(GREATEST\(wake_at, claimed_until\), wake_at, id\) WHERE \(wake_at IS NOT NULL\)$/,
    );
    expect(defs.status).toMatch(/\(status, id\)$/);
    expect(defs.workflow).toMatch(/\(workflow, id\)$/);
    const client = await pool.connect();
    try {
      await client.query('BEGIN; SET LOCAL enable_seqscan = off');
      const plan = await client.query(
        `EXPLAIN SELECT id FROM "${TEST_SCHEMA}"."${store.table}" WHERE wake_at IS NOT NULL
         AND GREATEST(wake_at, claimed_until) <= 5 ORDER BY GREATEST(wake_at, claimed_until), wake_at, id LIMIT 10`,
      );
      expect(JSON.stringify(plan.rows)).toContain(`${store.table}_due_at`);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('refuses a pre-existing table it did not create', async () => {
    const table = freshTable('x');
    await pool.query(`CREATE TABLE "${TEST_SCHEMA}"."${table}" (id text)`);
    await expect(createPostgresStore({ pool, schema: TEST_SCHEMA, table }).setup()).rejects.toThrow(
      /not created by stepfold/,
    );
  });

  it('rebuilds a table dropped by hand', async () => {
    const store = await fresh();
    await pool.query(
      `INSERT INTO "${TEST_SCHEMA}"."${store.table}$sent" (id, event, due_at) VALUES ('gone', '{}', 0)`,
    );
    await pool.query(`DROP TABLE "${TEST_SCHEMA}"."${store.table}"`);
    await store.setup();
    await store.create(snapshot('back'));
    expect(await store.load('back')).not.toBeNull();
    // Signals sent to the dropped table's instances went with it.
    expect(await store.inbox.claim(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
    const left = await pool.query(`SELECT count(*)::int AS n FROM "${TEST_SCHEMA}"."${store.table}$sent"`);
    expect(left.rows[0].n).toBe(0);
  });

  it('validates identifiers and limits before touching the pool', () => {
    for (const name of ['Bad', 'a-b', 'x"; DROP TABLE y; --', '1abc', '', 'a'.repeat(64)]) {
      expect(() => createPostgresStore({ pool, schema: name })).toThrow(TypeError);
      expect(() => createPostgresStore({ pool, table: name })).toThrow(TypeError);
    }
    expect(() => createPostgresStore({ pool, schema: 'pg_mine' })).toThrow(TypeError);
    expect(() => createPostgresStore({ pool, table: 'a'.repeat(49) })).toThrow(TypeError);
    expect(() => createPostgresStore({ pool, table: 'stepfold_migrations' })).toThrow(TypeError);
    expect(() => createPostgresStore({ pool, maxSnapshotBytes: MAX_SNAPSHOT_BYTES_LIMIT + 1 })).toThrow(
      RangeError,
    );
    expect(() => createPostgresStore({ pool, maxSnapshotBytes: 0 })).toThrow(RangeError);
    expect(() => createPostgresStore({ pool, claimMs: -1 })).toThrow(RangeError);
  });
});

describe('postgres rows', () => {
  it('lists in JS string order (id uses the C collation)', async () => {
    const store = await fresh();
    const ids = ['b', 'B', 'a', 'A', '_x', '-x', '0', 'Z.z', 'z:1', 'a@b', 'a/b', 'a+b', 'a=b', 'aa'];
    for (const id of ids) await store.create(snapshot(id));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await store.list({ limit: 4, cursor });
      seen.push(...page.items.map((s) => s.id));
      cursor = page.cursor;
    } while (cursor);
    expect(seen).toEqual([...ids].sort());
  });

  it('a jsonb store round-trips NUL, lone surrogates and edge numbers, moving rows JSONB refuses to the text column', async () => {
    const store = await freshStore({ snapshotColumn: 'jsonb' });
    const hostile = {
      nul: 'a\u0000b',
      high: '\ud800',
      low: 'x\udfffy',
      pair: 'ok \ud83d\ude00',
      literal: '\\u0000 and \\ud800 as text',
      '\u0000key': 1,
      numbers: [1.7976931348623157e308, 5e-324, 9007199254740991, -9007199254740991, -0.5, 1e21, 0.1],
    };
    await store.create(snapshot('nul', { input: hostile }));
    await store.create(snapshot('plain', { input: { numbers: hostile.numbers } }));
    expect((await store.load('nul'))?.input).toEqual(hostile);
    expect((await store.load('plain'))?.input).toEqual({ numbers: hostile.numbers });
    const columns = await pool.query(
      `SELECT id, snapshot IS NULL AS no_jsonb, snapshot_text IS NULL AS no_text
       FROM "${TEST_SCHEMA}"."${store.table}" ORDER BY id`,
    );
    expect(columns.rows).toEqual([
      { id: 'nul', no_jsonb: true, no_text: false },
      { id: 'plain', no_jsonb: false, no_text: true },
    ]);
    // A save moves the snapshot between the columns as its content needs.
    await store.save(snapshot('nul', { version: 2, input: 'clean' }), 1);
    await store.save(snapshot('plain', { version: 2, input: hostile }), 1);
    expect((await store.load('nul'))?.input).toBe('clean');
    expect((await store.load('plain'))?.input).toEqual(hostile);
    const page = await store.list({ limit: 10 });
    expect(page.items.map((s) => s.input)).toEqual(['clean', hostile]);
  });

  it('a text store (the default) keeps every snapshot verbatim in snapshot_text, and reads rows a jsonb store wrote', async () => {
    const jsonbStore = await freshStore({ snapshotColumn: 'jsonb' });
    await jsonbStore.create(snapshot('old', { input: { from: 'jsonb' } }));
    const store = createPostgresStore({ pool, schema: TEST_SCHEMA, table: jsonbStore.table });
    const input = { nul: 'a\u0000b', high: '\ud800', spaced: { b: 1, a: 2 } };
    await store.create(snapshot('new', { input }));
    expect((await store.load('new'))?.input).toEqual(input);
    expect((await store.load('old'))?.input).toEqual({ from: 'jsonb' });
    const column = async () =>
      (
        await pool.query(
          `SELECT id, snapshot IS NULL AS no_jsonb, snapshot_text IS NULL AS no_text
           FROM "${TEST_SCHEMA}"."${store.table}" ORDER BY id`,
        )
      ).rows;
    expect(await column()).toEqual([
      { id: 'new', no_jsonb: true, no_text: false },
      { id: 'old', no_jsonb: false, no_text: true },
    ]);
    // Verbatim: the stored text is the JSON the store was given, key order included.
    const text = await pool.query(
      `SELECT snapshot_text FROM "${TEST_SCHEMA}"."${store.table}" WHERE id = 'new'`,
    );
    expect(text.rows[0].snapshot_text).toContain('"spaced":{"b":1,"a":2}');
    // A save by the text store moves the old row to the text column.
    await store.save(snapshot('old', { version: 2, input: 'moved' }), 1);
    expect(await column()).toEqual([
      { id: 'new', no_jsonb: true, no_text: false },
      { id: 'old', no_jsonb: true, no_text: false },
    ]);
    expect((await jsonbStore.load('old'))?.input).toBe('moved');
  });

  it('maps duplicate, conflict and missing rows to the typed errors', async () => {
    const store = await fresh();
    await store.create(snapshot('one'));
    await expect(store.create(snapshot('one'))).rejects.toMatchObject({ code: 'ALREADY_EXISTS' });
    await store.save(snapshot('one', { version: 2 }), 1);
    await expect(store.save(snapshot('one', { version: 2 }), 1)).rejects.toMatchObject({
      code: 'VERSION_CONFLICT',
      expectedVersion: 1,
      actualVersion: 2,
    });
    await expect(store.save(snapshot('gone', { version: 2 }), 1)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(await store.delete('one')).toBe(true);
    expect(await store.delete('one')).toBe(false);
    expect(await store.load('one')).toBeNull();
  });

  it('refuses a snapshot over maxSnapshotBytes and writes nothing', async () => {
    const store = await fresh({ maxSnapshotBytes: 2000 });
    const big = snapshot('big', { input: 'é'.repeat(1000) });
    await expect(store.create(big)).rejects.toMatchObject({ code: 'SNAPSHOT_TOO_LARGE', limit: 2000 });
    expect(await store.load('big')).toBeNull();
    await store.create(snapshot('big'));
    await expect(store.save({ ...big, version: 2 }, 1)).rejects.toMatchObject({ code: 'SNAPSHOT_TOO_LARGE' });
    expect((await store.load('big'))?.version).toBe(1);
  });

  it('checks ids and names before any query', async () => {
    const calls: unknown[] = [];
    const spy = { query: async (...a: unknown[]) => calls.push(a), connect: async () => calls.push('c') };
    const store = createPostgresStore({ pool: spy as unknown as pg.Pool });
    const bad = ["x'; DROP TABLE y; --", '', 'a'.repeat(201), 'a b', 'é'];
    for (const id of bad) {
      await expect(store.load(id)).rejects.toMatchObject({ code: 'INVALID_ID' });
      await expect(store.delete(id)).rejects.toMatchObject({ code: 'INVALID_ID' });
      await expect(store.create(snapshot(id))).rejects.toMatchObject({ code: 'INVALID_ID' });
      await expect(store.save(snapshot(id), 1)).rejects.toMatchObject({ code: 'INVALID_ID' });
      await expect(store.list({ limit: 1, cursor: id || 'a b' })).rejects.toMatchObject({
        code: 'INVALID_ID',
      });
    }
    const badWorkflow = snapshot('ok', { workflow: { name: 'w\u0000', version: 1, hash: 'h' } });
    await expect(store.create(badWorkflow)).rejects.toMatchObject({ code: 'INVALID_ID' });
    expect(await store.list({ limit: 5, workflow: 'no such\u0000' })).toEqual({ items: [], cursor: null });
    expect(calls).toEqual([]);
  });

  it('never ends the caller pool', async () => {
    const store = await fresh();
    await store.close();
    expect(pool.ended).toBe(false);
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('reports an unreachable server as StoreUnavailableError with the cause', async () => {
    const dead = testPool('postgres://stepfold:stepfold@127.0.0.1:1/stepfold', 2);
    try {
      const store = createPostgresStore({ pool: dead, schema: TEST_SCHEMA, table: 'unreachable' });
      for (const call of [() => store.load('x'), () => store.setup(), () => store.listDue(0, 5)]) {
        const e = await call().then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(e).toBeInstanceOf(StoreUnavailableError);
        expect(isStepfoldError(e, 'STORE_UNAVAILABLE') && e.retryable).toBe(true);
        expect((e as Error).cause).toMatchObject({ code: 'ECONNREFUSED' });
      }
    } finally {
      await dead.end();
    }
  });

  it('lets other SQL errors through unchanged', async () => {
    const store = createPostgresStore({ pool, schema: TEST_SCHEMA, table: uniqueTable('never') });
    await expect(store.load('x')).rejects.toMatchObject({ code: '42P01' });
  });
});

describe('prepared statements', () => {
  it('are named and reused per connection, and can be turned off', async () => {
    const seen: Array<{ name?: string | undefined; text: string }> = [];
    const spy = {
      async query(q: { name?: string; text: string; values: unknown[] }) {
        seen.push({ name: q.name, text: q.text });
        return { rowCount: 0, rows: [] };
      },
    };
    const on = createPostgresStore({ pool: spy as unknown as pg.Pool, table: 'prep_a' });
    await on.load('x');
    await on.load('y');
    const other = createPostgresStore({ pool: spy as unknown as pg.Pool, table: 'prep_b' });
    await other.load('x');
    const [a, b, c] = seen;
    expect(a?.name).toMatch(/^stepfold_\d+$/);
    expect(b?.name).toBe(a?.name); // same text, same name
    expect(c?.name).not.toBe(a?.name); // another table is another statement
    const off = createPostgresStore({ pool: spy as unknown as pg.Pool, preparedStatements: false });
    await off.load('x');
    expect(seen[3]?.name).toBeUndefined();
  });
});
