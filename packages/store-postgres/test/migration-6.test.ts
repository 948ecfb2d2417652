import type { Snapshot, WorkflowEvent } from '@stepfold/engine';
import { makeTestSnapshot } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { createPostgresStore, MIGRATIONS } from '../src/index.js';
import { type TableNames, tableNames } from '../src/setup.js';
import { TEST_SCHEMA } from './server.js';
import { useTestTables } from './test-tables.js';

// Migration 6: who holds a claim (`claim_token`), and the definition `send` accepts (`definition`).
// The conformance suite sees only what the tokens do; this is what the columns hold, and a table
// set up by the previous version.

const { pool, table: freshTable, store: freshStore } = useTestTables('k');

const wf = { name: 'tok', version: 3, hash: 'abc' };
const due = (id: string, wakeAt: number, version = 1): Snapshot =>
  makeTestSnapshot(id, { workflow: wf, status: 'waiting', wakeAt, version });
const signal = (name: string): WorkflowEvent => ({ type: 'signal', at: 1, name });

/** The claim and definition columns of one row. */
async function columns(table: string, id: string) {
  const r = await pool.query(
    `SELECT claimed_until, claim_token, definition FROM "${TEST_SCHEMA}"."${table}" WHERE id = $1`,
    [id],
  );
  return r.rows[0] as { claimed_until: string | null; claim_token: string | null; definition: string | null };
}

/** Applies the migrations up to `version` by hand, as an older release's setup() did. */
async function migrateTo(names: TableNames, version: number): Promise<void> {
  for (const m of MIGRATIONS.filter((x) => x.version <= version)) {
    for (const statement of m.statements(names)) await pool.query(statement);
    await pool.query(
      `INSERT INTO ${names.migrations} (table_name, version, description) VALUES ($1, $2, $3)`,
      [names.table, m.version, m.description],
    );
  }
}

describe('postgres claim_token and definition (migration 6)', () => {
  it('a claim writes its token; a release with another token leaves it; a save ends any claim', async () => {
    const store = await freshStore();
    for (const id of ['a', 'b']) await store.create(due(id, 10));
    expect((await columns(store.table, 'a')).definition).toBe('tok@3@abc');
    expect(await store.listDue(100, 1, { token: 'w1', leaseMs: 1000 })).toEqual(['a']);
    expect(await columns(store.table, 'a')).toMatchObject({ claimed_until: '1100', claim_token: 'w1' });
    expect((await store.claims.claimDue(100, 1, { token: 'w2' })).map((s) => s.id)).toEqual(['b']);
    await store.claims.release(['a', 'b'], 'w2');
    expect(await columns(store.table, 'a')).toMatchObject({ claimed_until: '1100', claim_token: 'w1' });
    expect(await columns(store.table, 'b')).toMatchObject({ claimed_until: null, claim_token: null });
    // Another store object on the table has a token of its own: its release leaves w1's claim.
    const other = createPostgresStore({ pool, schema: TEST_SCHEMA, table: store.table });
    await other.claims.release(['a']);
    expect((await columns(store.table, 'a')).claim_token).toBe('w1');
    await store.save(due('a', 10, 2), 1);
    expect(await columns(store.table, 'a')).toMatchObject({ claimed_until: null, claim_token: null });
  });

  it('upgrades a table made at version 5: old claims lapse (no token releases them), old rows still take sent signals', async () => {
    await freshStore(); // the schema and the migrations table exist
    const table = freshTable('m');
    const names = tableNames(TEST_SCHEMA, table);
    await migrateTo(names, 5);
    // Rows as version 5's statements left them: one claimed until 5000, one free.
    await pool.query(
      `INSERT INTO ${names.qualified} (id, version, status, workflow, wake_at, claimed_until, snapshot_text)
       VALUES ('old-held', 1, 'waiting', 'tok', 10, 5000, $1), ('old-free', 1, 'waiting', 'tok', 20, NULL, $2)`,
      [JSON.stringify(due('old-held', 10)), JSON.stringify(due('old-free', 20))],
    );
    const store = createPostgresStore({ pool, schema: TEST_SCHEMA, table });
    await Promise.all([store.setup(), store.setup()]);
    await store.setup();
    const versions = await pool.query(
      `SELECT version FROM ${names.migrations} WHERE table_name = $1 ORDER BY version`,
      [table],
    );
    expect(versions.rows.map((r) => r.version)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(await columns(table, 'old-held')).toEqual({
      claimed_until: '5000',
      claim_token: null,
      definition: null,
    });

    // The old claim has no token: neither the store's own release nor any other gives it back.
    await store.claims.release(['old-held']);
    await store.claims.release(['old-held'], 'anyone');
    expect(await store.listDue(100, 10, { token: 'new' })).toEqual(['old-free']);
    expect(await store.listDue(4_999, 10)).toEqual([]);
    expect(await store.listDue(5_000, 10)).toEqual(['old-held']);

    // A row not written since has no definition: send reads it from the snapshot.
    expect(await store.inbox.send('old-free', signal('go'), ['tok@3@other'])).toBe(false);
    expect(await store.inbox.send('old-free', signal('go'), ['tok@3@abc'])).toBe(true);
    const [waiting] = await store.inbox.claim(0, 1, ['old-free']);
    await store.save(due('old-free', 20, 2), 1, { consumed: waiting!.sent });
    expect(await columns(table, 'old-free')).toMatchObject({ definition: 'tok@3@abc', claim_token: null });
    expect(await store.inbox.claim(0, 1, ['old-free'])).toEqual([]);
  });
});
