import { randomBytes } from 'node:crypto';
import { makeTestSnapshot, type Snapshot } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { createPostgresStore } from '../src/index.js';
import { recordingPool, TEST_SCHEMA } from './server.js';
import { useTestTables } from './test-tables.js';

// Migration 11: a snapshot over ~2 KB lives out of line, so a claim (a new version of the whole
// row, since it moves the row in the due indexes) copies a narrow row and a pointer, not the
// snapshot. Measured in what the server reports, never in time: the row's width in the heap and
// the WAL one claiming poll writes (EXPLAIN ANALYZE with WAL, rolled back).

const { pool, store } = useTestTables('cw');

const N = 100;

/** A ~3 KB snapshot that compresses to ~1.2 KB: inline, a claim would copy that much. */
function wide(id: string): Snapshot {
  const s = makeTestSnapshot(id, { workflow: { name: 'order', version: 1, hash: 'h' }, wakeAt: 1_000 });
  return { ...s, input: { note: randomBytes(500).toString('hex') + 'x'.repeat(2_000) } };
}

interface Plan {
  'WAL Bytes': number;
}

describe('postgres claim width (migration 11)', () => {
  it('keeps wide snapshots out of the row a claim rewrites', async () => {
    const s = await store({ claimMs: 0 });
    const t = `"${TEST_SCHEMA}"."${s.table}"`;
    const options = await pool.query<{ reloptions: string[] | null }>(
      `SELECT reloptions FROM pg_class WHERE oid = $1::regclass`,
      [t],
    );
    expect(options.rows[0]!.reloptions).toContain('toast_tuple_target=128');

    const written = Array.from({ length: N }, (_, i) => wide(`w-${String(i).padStart(3, '0')}`));
    for (const x of written) await s.create(x);
    const sizes = await pool.query<{ heap: string; shortest: number }>(
      `SELECT pg_relation_size(c.oid)::text AS heap,
         (SELECT min(octet_length(snapshot_text)) FROM ${t}) AS shortest
       FROM pg_class c WHERE c.oid = $1::regclass`,
      [t],
    );
    const size = sizes.rows[0]!;
    // Every snapshot text is over 3 KB; the heap holds the rows with pointers to them: 100 rows
    // of ~150 bytes in at most 3 pages of 8 KB (inline, 100 snapshots of 2.5-3 KB take over 30).
    expect(size.shortest).toBeGreaterThan(3_000);
    expect(Number(size.heap)).toBeLessThanOrEqual(3 * 8192);

    // A poll that claims all of them, once for real (capturing the statement the store sends)...
    const sent: Array<{ text: string; values: unknown[] }> = [];
    const spy = recordingPool(pool, (q) => sent.push(q));
    const poller = createPostgresStore({
      pool: spy,
      schema: TEST_SCHEMA,
      table: s.table,
      claimMs: 0,
    });
    expect(await poller.listDue(2_000, N)).toHaveLength(N);
    // ...then again under EXPLAIN, rolled back: claimMs 0 leaves the rows due at the same `now`.
    const claim = sent.at(-1)!;
    const client = await pool.connect();
    let plan: Plan;
    try {
      await client.query('BEGIN');
      const r = await client.query<{ 'QUERY PLAN': Array<{ Plan: Plan }> }>(
        `EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) ${claim.text}`,
        claim.values,
      );
      plan = r.rows[0]!['QUERY PLAN'][0]!.Plan;
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
    // Each claimed row: a narrow heap version, a lock record and an entry in each of the five
    // indexes, about 1 KB. Inline, the version also carries the compressed snapshot: 2 KB a row.
    expect(plan['WAL Bytes'] / N).toBeLessThan(1_500);

    // The snapshots read back whole, after the claims.
    for (const x of written.slice(0, 5)) expect((await s.load(x.id))?.input).toEqual(x.input);
    await poller.close();
  }, 60_000);
});
