import { randomBytes } from 'node:crypto';
import { makeTestSnapshot, type Snapshot } from '@stepfold/engine';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresStore, MIGRATIONS } from '../src/index.js';
import { tableNames } from '../src/setup.js';
import { TEST_SCHEMA } from './server.js';
import { useTestTables } from './test-tables.js';

// Migration 14: with migration 11's toast_tuple_target of 128, every write of a row that has its
// snapshot out of line also moved the row's other values over 24 bytes out (a claim's token, a
// save's definition and search attributes, the id), one TOAST row each, the previous one deleted.
// Counted in rows the server reports for the transaction (pg_stat_get_xact_tuples_*), never in time.

const { pool, store, table: freshTable } = useTestTables('nc');

const N = 40;
const NARROW = ['claim_token', 'definition', 'fair_key', 'id', 'search', 'status', 'workflow'];

/** A wide row: a snapshot PostgreSQL keeps out of line, and an id, definition and search over 24 bytes. */
function wide(i: number, version = 1): Snapshot {
  const id = `order-${String(i).padStart(4, '0')}-3f6c1a2e-9b1d-4c55-a0e1-7d2f`;
  const s = makeTestSnapshot(id, {
    workflow: { name: 'order-fulfilment', version: 1, hash: 'f'.repeat(40) },
    wakeAt: 1_000,
    version,
  });
  const input = { note: randomBytes(500).toString('hex') + 'x'.repeat(2_000) };
  return { ...s, input, search: { customer: `customer-${i}`, region: 'eu-west-1' } };
}

/**
 * Rows written to and deleted from the table's TOAST table, and updated in the table, as counted on
 * this connection and not yet sent to the statistics (so: take the difference of two readings).
 */
async function counts(client: pg.PoolClient, table: string) {
  const r = await client.query<{ toasted: string; untoasted: string; updated: string }>(
    `SELECT pg_stat_get_xact_tuples_inserted(c.reltoastrelid)::text AS toasted,
       pg_stat_get_xact_tuples_deleted(c.reltoastrelid)::text AS untoasted,
       pg_stat_get_xact_tuples_updated(c.oid)::text AS updated
     FROM pg_class c WHERE c.oid = $1::regclass`,
    [`"${TEST_SCHEMA}"."${table}"`],
  );
  const row = r.rows[0]!;
  return { toasted: Number(row.toasted), untoasted: Number(row.untoasted), updated: Number(row.updated) };
}

/** Storage of the table's columns: `m` (MAIN, kept in the row) or `x` (EXTENDED, out of line when wide). */
async function storage(table: string): Promise<Record<string, string>> {
  const r = await pool.query<{ attname: string; attstorage: string }>(
    `SELECT attname, attstorage FROM pg_attribute
     WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attstorage <> 'p'`,
    [`"${TEST_SCHEMA}"."${table}"`],
  );
  return Object.fromEntries(r.rows.map((x) => [x.attname, x.attstorage]));
}

describe('postgres narrow columns (migration 14)', () => {
  it('keeps everything but the snapshot in the row: claims write no TOAST rows, a save one', async () => {
    const s = await store({ claimMs: 0 });
    expect(await storage(s.table)).toEqual({
      ...Object.fromEntries(NARROW.map((c) => [c, 'm'])),
      snapshot: 'x',
      snapshot_text: 'x',
    });
    for (let i = 0; i < N; i++) await s.create(wide(i));
    // The premise: each snapshot is out of line, in one TOAST row (compressed under ~2 KB).
    const sizes = await pool.query<{ most: number }>(
      `SELECT max(pg_column_size(snapshot_text)) AS most FROM "${TEST_SCHEMA}"."${s.table}"`,
    );
    expect(sizes.rows[0]!.most).toBeLessThan(1_900);

    // Everything runs in one transaction on one connection, rolled back: its own counters.
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const inTx = createPostgresStore({
        pool: client as unknown as pg.Pool,
        schema: TEST_SCHEMA,
        table: s.table,
        claimMs: 0,
      });
      const start = await counts(client, s.table);
      const since = async () => {
        const now = await counts(client, s.table);
        return {
          toasted: now.toasted - start.toasted,
          untoasted: now.untoasted - start.untoasted,
          updated: now.updated - start.updated,
        };
      };
      // Two claiming polls: the first writes each row's claim token, the second replaces it.
      expect(await inTx.listDue(2_000, N)).toHaveLength(N);
      expect(await inTx.listDue(2_000, N)).toHaveLength(N);
      // Before, the token (a 36-character UUID) went out of line at every claim: N TOAST rows,
      // then N more with N deleted.
      expect(await since()).toEqual({ toasted: 0, untoasted: 0, updated: 2 * N });

      // A save writes its new snapshot (one TOAST row) and deletes the old one; its id,
      // definition and search attributes stay in the row (before: three TOAST rows more).
      for (let i = 0; i < N; i++) await inTx.save(wide(i, 2), 1);
      expect(await since()).toEqual({ toasted: N, untoasted: N, updated: 3 * N });
      const back = await inTx.load(wide(3).id);
      expect(back?.version).toBe(2);
      expect(back?.search).toEqual({ customer: 'customer-3', region: 'eu-west-1' });
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  }, 60_000);

  it('migration 14 keeps a storage set by hand and sets the others', async () => {
    await store(); // the schema and the migrations table exist
    const table = freshTable('ncm');
    const names = tableNames(TEST_SCHEMA, table);
    const before = MIGRATIONS.filter((m) => m.version < 14);
    for (const m of before) {
      for (const statement of m.statements(names)) await pool.query(statement);
      await pool.query(
        `INSERT INTO ${names.migrations} (table_name, version, description) VALUES ($1, $2, $3)`,
        [table, m.version, m.description],
      );
    }
    expect((await storage(table))['claim_token']).toBe('x');
    await pool.query(`ALTER TABLE ${names.qualified} ALTER COLUMN definition SET STORAGE EXTERNAL`);
    const s = createPostgresStore({ pool, schema: TEST_SCHEMA, table });
    await s.setup();
    expect(await storage(table)).toEqual({
      ...Object.fromEntries(NARROW.map((c) => [c, 'm'])),
      definition: 'e',
      snapshot: 'x',
      snapshot_text: 'x',
    });
    const w = wide(1);
    await s.create(w);
    expect((await s.load(w.id))?.input).toEqual(w.input);
  });
});
