import type { Snapshot } from '@stepfold/engine';
import { makeTestSnapshot } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { createPostgresStore, MIGRATIONS, type PostgresStore } from '../src/index.js';
import { type TableNames, tableNames } from '../src/setup.js';
import { fillDueRows, flatten, type PlanNode } from './due-rows.js';
import { recordingPool, TEST_SCHEMA } from './server.js';
import { useTestTables } from './test-tables.js';

const { pool, table: freshTable, store: freshStore } = useTestTables('d');

const HOUR = 3_600_000;

/** A store on `table` whose pool records the text of every statement it sends. */
function spied(table: string, texts: string[]): PostgresStore {
  const spy = recordingPool(pool, (q) => texts.push(q.text));
  return createPostgresStore({ pool: spy, schema: TEST_SCHEMA, table });
}

function due(id: string, wakeAt: number, workflow = 'wf', version = 1): Snapshot {
  return makeTestSnapshot(id, { workflow: { name: workflow, version: 1, hash: 'h' }, wakeAt, version });
}

/** Index name (without the table's prefix) → definition. */
async function indexes(table: string): Promise<Record<string, string>> {
  const r = await pool.query<{ indexname: string; indexdef: string }>(
    'SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2',
    [TEST_SCHEMA, table],
  );
  return Object.fromEntries(r.rows.map((x) => [x.indexname.slice(table.length + 1), x.indexdef]));
}

interface Poll {
  /** The nodes of the plan's CTEs that find and pick the rows (not the UPDATE), as EXPLAIN ANALYZE ran them. */
  nodes: PlanNode[];
  /** Ids the poll claimed (in a run of its own). */
  ids: string[];
}

// The CTEs of a poll that find the due rows and pick them (statements.ts).
const PICKING = ['CTE keys', 'CTE chosen', 'CTE picked', 'CTE due', 'CTE named'];

/**
 * Runs a poll's statement, prepared, in the given plan mode, twice, each in a transaction rolled
 * back: under EXPLAIN (ANALYZE, FORMAT JSON) for what its nodes read, and plainly for its ids.
 */
async function poll(text: string, values: unknown[], mode: string): Promise<Poll> {
  const client = await pool.connect();
  const args = values
    .map((v) => (Array.isArray(v) ? `ARRAY[${v.map((x) => `'${x}'`)}]` : `'${v}'`))
    .join(', ');
  try {
    await client.query(`SET plan_cache_mode = ${mode}`);
    await client.query(`PREPARE poll AS ${text}`);
    await client.query('BEGIN');
    const plan = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE poll(${args})`,
    );
    await client.query('ROLLBACK; BEGIN');
    const r = await client.query<{ id: string }>(`EXECUTE poll(${args})`);
    const picking = flatten(plan.rows[0]!['QUERY PLAN'][0].Plan).filter((n) =>
      PICKING.includes(n['Subplan Name'] ?? ''),
    );
    return { nodes: picking.flatMap(flatten), ids: r.rows.map((x) => x.id) };
  } finally {
    await client.query('ROLLBACK; DEALLOCATE poll; RESET plan_cache_mode').catch(() => {});
    client.release();
  }
}

describe('postgres due index (migrations 5 and 9)', () => {
  it('indexes each fairness key by the effective due time, GREATEST(wake_at, claimed_until), in place of the old due indexes', async () => {
    const store = await freshStore();
    const defs = await indexes(store.table);
    expect(defs.fair_due).toMatch(
      /\(fair_key, GREATEST\(wake_at, claimed_until\), wake_at, id\) WHERE \(wake_at IS NOT NULL\)$/,
    );
    expect(defs.lane_fair_due).toMatch(
      /\(workflow, fair_key, GREATEST\(wake_at, claimed_until\), wake_at, id\) WHERE \(wake_at IS NOT NULL\)$/,
    );
    expect(Object.keys(defs).sort()).toEqual(['fair_due', 'lane_fair_due', 'pkey', 'status', 'workflow']);
  });

  it('a poll reads about limit index entries however many claimed instances are due ahead of it', async () => {
    const store = await freshStore();
    await fillDueRows(pool, `"${TEST_SCHEMA}"."${store.table}"`, 12_000, 60);
    const texts: string[] = [];
    const poller = spied(store.table, texts);
    const now = 100_000;
    const limit = 10;
    // Every statement form, with the values the store binds (claimDue's narrowed to late ids).
    await poller.listDue(now, limit);
    await poller.listDue(now, limit, { workflow: 'wf-1' });
    await poller.claims.claimDue(now, limit);
    await poller.claims.claimDue(now, limit, { workflow: 'wf-1' });
    const late = ['r-011941', 'r-011950'];
    await poller.claims.claimDue(now, limit, { ids: late });
    await poller.claims.claimDue(now, limit, { workflow: 'wf-1', ids: late });
    const [all, lane, claimAll, claimLane, claimIds, claimLaneIds] = texts.slice(-6) as string[];
    const polls: Array<[string, unknown[], string]> = [
      [all!, [now, now, limit, 'tok'], 'fair_due'],
      [lane!, [now, now, limit, 'tok', 'wf-1'], 'lane_fair_due'],
      [claimAll!, [now, now, limit, 'tok'], 'fair_due'],
      [claimLane!, [now, now, limit, 'tok', 'wf-1'], 'lane_fair_due'],
      [claimIds!, [now, now, limit, 'tok', late], 'ids'],
      [claimLaneIds!, [now, now, limit, 'tok', 'wf-1', late], 'ids'],
    ];
    // One at a time: a poll skips the rows another one's open transaction has locked.
    const run = async (mode: string) => {
      const out: Poll[] = [];
      for (const [text, v] of polls) out.push(await poll(text, v, mode));
      return out;
    };
    const ordered = (from: number) =>
      Array.from({ length: limit }, (_, i) => `r-${String(from + i).padStart(6, '0')}`);

    // Give back what those calls claimed: first nothing is held, then the earliest 4,000 for an hour.
    await pool.query(`UPDATE "${TEST_SCHEMA}"."${store.table}" SET claimed_until = NULL`);
    for (const mode of ['force_custom_plan', 'force_generic_plan']) {
      const free = await run(mode);
      expect(free[0]!.ids.sort()).toEqual(ordered(1));
      expect(free[4]!.ids.sort()).toEqual(late);
    }
    expect(await store.listDue(now, 4_000, { leaseMs: HOUR })).toHaveLength(4_000);

    for (const mode of ['force_custom_plan', 'force_generic_plan']) {
      const held = await run(mode);
      for (const [k, { nodes }] of held.entries()) {
        const what = `${mode}, poll ${k}`;
        const index = polls[k]![2];
        // The CTE's nodes only: how the UPDATE joins its few rows back is another matter.
        // Only `$fair` (a row per key: none here) may be read whole.
        expect(
          nodes.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === store.table),
          what,
        ).toEqual([]);
        if (index === 'ids') {
          // Named ids: found by key (the primary key, or (workflow, id) in a lane), then sorted.
          expect(
            nodes.some((n) => n['Index Cond']?.includes('id = ANY')),
            what,
          ).toBe(true);
          continue;
        }
        const scans = nodes.filter((n) => n['Index Name'] === `${store.table}_${index}`);
        expect(scans.length, `${what} uses ${index}`).toBeGreaterThan(0);
        // What is sorted is the rows picked (for their rounds), never the due range.
        for (const n of nodes.filter((x) => x['Node Type'] === 'Sort'))
          expect(n['Actual Rows']!, what).toBeLessThanOrEqual(limit);
        // The index bounds the scans by the effective due time, so together they read the `limit`
        // live entries picked, the one key's head and the probes for keys, and filter none out:
        // the old (wake_at, id) scan removed the 4,000 claimed by a filter.
        expect(
          scans.some((n) => n['Index Cond']?.includes('GREATEST(wake_at, claimed_until) <= ')),
          what,
        ).toBe(true);
        const read = scans.reduce(
          (sum, n) => sum + n['Actual Rows']! * n['Actual Loops']! + (n['Rows Removed by Filter'] ?? 0),
          0,
        );
        expect(read, what).toBeGreaterThanOrEqual(limit);
        expect(read, what).toBeLessThanOrEqual(limit + 3);
      }
      // The earliest unclaimed, in order.
      expect(held[0]!.ids.sort()).toEqual(ordered(4_001));
      expect(held[2]!.ids.sort()).toEqual(ordered(4_001));
      const laneIds = held[1]!.ids.map((id) => Number(id.slice(2))).sort((a, b) => a - b);
      expect(laneIds).toEqual(Array.from({ length: limit }, (_, i) => 4_021 + 60 * i));
      expect(held[4]!.ids.sort()).toEqual(late);
      expect(held[5]!.ids).toEqual(['r-011941']);
    }
  });

  it('a lapsed claim is due at its expiry, behind what fell due before it; a batch lapsing together comes back in wake order', async () => {
    const store = await freshStore({ claimMs: 1_000 });
    for (const [id, at] of [
      ['b', 20],
      ['a', 20],
      ['c', 10],
    ] as const)
      await store.create(due(id, at));
    expect(await store.listDue(100, 10)).toEqual(['c', 'a', 'b']); // claimed until 1100
    await store.create(due('late', 500));
    // Due at 500, 'late' goes before the three due again at 1100, of which 'c' woke first; the
    // batch comes back in that order.
    expect(await store.listDue(1_100, 2)).toEqual(['late', 'c']);
    expect(await store.listDue(1_100, 10)).toEqual(['a', 'b']);
  });

  it('migrations 5 and 9 upgrade a table made at version 4, keeping its rows and their claims', async () => {
    await freshStore(); // the schema and the migrations table exist
    const table = freshTable('m');
    const names = tableNames(TEST_SCHEMA, table);
    await migrateTo(names, 4);
    const store = createPostgresStore({ pool, schema: TEST_SCHEMA, table });
    const t = names.qualified;
    // Rows as version 4's statements wrote them (this store's own need the latest columns).
    for (let i = 0; i < 6; i++) {
      const s = due(`m-${i}`, 10 + i, i % 2 ? 'odd' : 'even');
      await pool.query(
        `INSERT INTO ${t} (id, version, status, workflow, wake_at, snapshot_text) VALUES ($1, 1, $2, $3, $4, $5)`,
        [s.id, s.status, s.workflow.name, s.wakeAt, JSON.stringify(s)],
      );
    }
    // Claims as version 4's statements left them: m-0 and m-1 until 5000, m-2 lapsed at 50.
    await pool.query(`UPDATE ${t} SET claimed_until = 5000 WHERE id IN ('m-0', 'm-1')`);
    await pool.query(`UPDATE ${t} SET claimed_until = 50 WHERE id = 'm-2'`);
    // The lane index built by hand beforehand, as the README says: the migration keeps it.
    await pool.query(
      `CREATE INDEX CONCURRENTLY "${table}_lane_due_at" ON ${t} (workflow, (GREATEST(wake_at, claimed_until)), wake_at, id) WHERE wake_at IS NOT NULL`,
    );
    const built = await pool.query(`SELECT '"${TEST_SCHEMA}"."${table}_lane_due_at"'::regclass::oid AS oid`);
    expect(Object.keys(await indexes(table))).toContain('due_lane');

    // The releases that ran migrations 5 to 7, then this one's setup().
    await migrateTo(names, 7, 4);
    const versions = async () =>
      (
        await pool.query(`SELECT version FROM ${names.migrations} WHERE table_name = $1 ORDER BY version`, [
          table,
        ])
      ).rows.map((r) => r.version);
    expect(await versions()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const defs = await indexes(table);
    expect(Object.keys(defs).sort()).toEqual(['due_at', 'lane_due_at', 'pkey', 'status', 'workflow']);
    const kept = await pool.query(`SELECT '"${TEST_SCHEMA}"."${table}_lane_due_at"'::regclass::oid AS oid`);
    expect(kept.rows).toEqual(built.rows);
    await store.setup();
    await store.setup();
    expect(await versions()).toEqual(MIGRATIONS.map((m) => m.version));
    expect(Object.keys(await indexes(table)).sort()).toEqual([
      'fair_due',
      'lane_fair_due',
      'pkey',
      'status',
      'workflow',
    ]);

    // The claims hold until they lapse (m-2's has); the others are due.
    // m-2's lapsed claim is due at its expiry, 50, after m-4's wake time, 14.
    expect(await store.listDue(100, 10, { workflow: 'even' })).toEqual(['m-4', 'm-2']);
    expect(await store.listDue(100, 10)).toEqual(['m-3', 'm-5']);
    expect(await store.listDue(4_999, 10)).toEqual([]);
    await store.save(due('m-1', 10, 'odd', 2), 1); // a save ends a claim taken before the upgrade
    expect(await store.listDue(4_999, 10, { workflow: 'odd' })).toEqual(['m-1']);
    expect(await store.listDue(5_000, 10)).toEqual(['m-0']);
  });
});

/** Applies the migrations after `after` up to `version` by hand, as an older release's setup() did. */
async function migrateTo(names: TableNames, version: number, after = 0): Promise<void> {
  for (const m of MIGRATIONS.filter((x) => x.version > after && x.version <= version)) {
    for (const statement of m.statements(names)) await pool.query(statement);
    await pool.query(
      `INSERT INTO ${names.migrations} (table_name, version, description) VALUES ($1, $2, $3)`,
      [names.table, m.version, m.description],
    );
  }
}
