import { describe, expect, it } from 'vitest';
import { createPostgresStore } from '../src/index.js';
import { blocks, fillDueRows, flatten, type PlanNode } from './due-rows.js';
import { recordingPool, TEST_SCHEMA } from './server.js';
import { useTestTables } from './test-tables.js';

// A claim moves its row in the due index and leaves the entry it moved from, dead, at the head of
// its key until a vacuum cleans the indexes (every one does since migration 15, see
// vacuum-index-cleanup.test.ts). A poll walks them once, in its key's probe, which finds the key's
// first live row; the scan that takes the rows starts there. Counted in the buffers EXPLAIN (ANALYZE, BUFFERS) reports, never in time.

const { pool, store } = useTestTables('ch');

const HOUR = 3_600_000;
const ROWS = 30_000;
const HELD = 20_000;
const LIMIT = 10;

describe('postgres poll past claimed rows', () => {
  it('walks the dead entries claims left at the head of the due order once, not in the scan that takes rows', async () => {
    const s = await store({ claimMs: 0 });
    const t = `"${TEST_SCHEMA}"."${s.table}"`;
    await fillDueRows(pool, t, ROWS);
    const now = 1_000_000;
    // The earliest HELD claimed for an hour: their old entries stay at the head, dead.
    expect(await s.listDue(now, HELD, { leaseMs: HOUR })).toHaveLength(HELD);
    const texts: string[] = [];
    const poller = createPostgresStore({
      pool: recordingPool(pool, (q) => texts.push(q.text)),
      schema: TEST_SCHEMA,
      table: s.table,
      claimMs: 0,
    });
    // A first poll finds them dead (and marks them so in the index).
    expect(await poller.listDue(now, LIMIT)).toEqual(
      Array.from({ length: LIMIT }, (_, i) => `r-${String(HELD + 1 + i).padStart(6, '0')}`),
    );
    const text = texts.at(-1)!;

    for (const mode of ['force_generic_plan', 'force_custom_plan']) {
      const client = await pool.connect();
      try {
        await client.query(`SET plan_cache_mode = ${mode}`);
        await client.query(`PREPARE poll AS ${text}`);
        await client.query('BEGIN');
        const r = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE poll('${now}', '${now}', ${LIMIT}, 'tok')`,
        );
        const nodes = flatten(r.rows[0]!['QUERY PLAN'][0].Plan);
        const cte = (name: string) => flatten(nodes.find((n) => n['Subplan Name'] === name)!);
        const due = `${s.table}_fair_due`;
        // The key's probe walks the HELD dead entries: ~100 index pages.
        const probe = Math.max(
          ...cte('CTE keys')
            .filter((n) => n['Index Name'] === due)
            .map(blocks),
        );
        expect(probe, mode).toBeGreaterThan(50);
        // The scan that locks the rows starts at the key's first live entry: its LIMIT rows' heap
        // pages and a descent of the index, not the walk again (before: as many pages as the probe).
        const picked = cte('CTE picked').filter((n) => n['Index Name'] === due);
        expect(picked.length, mode).toBeGreaterThan(0);
        for (const n of picked) expect(blocks(n), mode).toBeLessThan(3 * LIMIT);
      } finally {
        await client.query('ROLLBACK; DEALLOCATE poll; RESET plan_cache_mode').catch(() => {});
        client.release();
      }
    }
  }, 60_000);
});
