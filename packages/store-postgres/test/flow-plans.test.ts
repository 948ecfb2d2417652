import { makeTestSnapshot } from '@stepfold/engine';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { flowStatements, savingFlowStatement } from '../src/flow.js';
import { type FastShape, fastFlowStatement, fastValues } from '../src/flow-fast.js';
import { tableNames } from '../src/setup.js';
import { storeStatements } from '../src/statements.js';
import { TEST_SCHEMA } from './server.js';
import { useTestTables } from './test-tables.js';

// What the flow statements cost the server to plan: a limited task's save and a create's acquire
// are long statements, and a prepared statement planned again at every call costs more than it
// runs. Plan costs and plan counts, never times.

const { pool, store: freshStore } = useTestTables('fp');

/**
 * The arguments of one save with flow work (`$1`-`$22`, the released holders' counters last): `i`
 * varies the values as calls do.
 */
function saveArgs(i: number): unknown[] {
  const take = i % 3 !== 2;
  const release = i % 3 !== 0;
  const now = 1_000_000 + i;
  return [
    ...[`inst-${i}`, 1, 2, 'running', 'wf', now, 'wf@1@h', '', null, null, '{}'],
    take ? `inst-${i}/1/s2/1#run#1@2` : '',
    take ? ['wf/s2'] : [],
    take ? [`k-${i % 100}`] : [],
    take ? [0] : [],
    take ? [4] : [],
    now,
    now + 10_000,
    release ? [`inst-${i}/1/s1/1#run#1@1`] : [],
    release ? ['wf/s1'] : [],
    release ? [`k-${i % 100}`] : [],
    release ? [0] : [],
  ];
}

/** The arguments of one release of two holders on their counters (`$1`-`$5`). */
function releaseArgs(i: number): unknown[] {
  return [[`h-${i}`, `h-${i + 1}`], 1_000_000 + i, ['wf/s1', 'wf/s2'], [`k-${i}`, `k-${i + 1}`], [0, 0]];
}

/** The arguments of one acquire (`$1`-`$8`). */
function acquireArgs(i: number): unknown[] {
  const now = 1_000_000 + i;
  return [`inst-${i}/1/s1/1#run#1@1`, `inst-${i}`, ['wf/s1'], [`k-${i % 100}`], [0], [4], now, now + 10_000];
}

describe('postgres flow statements (plans)', () => {
  it("a limited save's and an acquire's prepared statements keep their generic plan, planned once, not at every call", async () => {
    // The server plans a prepared statement's first five executions for their values, then keeps a
    // generic plan unless it is priced above theirs. With the needs' arrays visible, a plan for one
    // need was priced a quarter of the generic plan (which guesses ten), so every call was planned
    // again, and planning the save took longer than running it.
    const store = await freshStore();
    const names = tableNames(TEST_SCHEMA, store.table);
    await pool.query(
      `INSERT INTO ${names.flow} (scope, key, period, lim, holds, waiting)
       SELECT 'wf/s' || (g % 10), 'k-' || (g / 10), 0, 4, jsonb_build_object('h-' || g, 2000000), '{}'
       FROM generate_series(0, 999) AS g`,
    );
    await pool.query(`ANALYZE ${names.flow}`);
    const sql = storeStatements(names, 'unused_channel', 'text');
    const forms: Array<[string, string, (i: number) => unknown[]]> = [
      [
        'save',
        savingFlowStatement(names, sql.save({ consume: false, match: false, notify: false }), null, true),
        saveArgs,
      ],
      ['acquire', flowStatements(names).ACQUIRE, acquireArgs],
      ['release', flowStatements(names).RELEASE_AT, releaseArgs],
    ];
    const client = await pool.connect();
    try {
      for (const [what, text, args] of forms) {
        await client.query('BEGIN');
        const cost = async (mode: string) => {
          await client.query(`SET LOCAL plan_cache_mode = ${mode}`);
          const r = await client.query<{ 'QUERY PLAN': [{ Plan: { 'Total Cost': number } }] }>({
            text: `EXPLAIN (FORMAT JSON) ${text}`,
            values: args(0),
          });
          return r.rows[0]!['QUERY PLAN'][0].Plan['Total Cost'];
        };
        const [generic, custom] = [await cost('force_generic_plan'), await cost('force_custom_plan')];
        await client.query('ROLLBACK');
        console.log(`flow ${what}: generic plan cost ${generic}, custom ${custom}`);
        expect(generic, what).toBeLessThanOrEqual(custom);
        // Twelve calls as the store runs them (default plan_cache_mode), values varying as calls do.
        await client.query('BEGIN');
        for (let i = 0; i < 12; i++) await client.query({ name: `flow_${what}`, text, values: args(i) });
        const counts = await client.query<{ generic_plans: string; custom_plans: string }>(
          'SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = $1',
          [`flow_${what}`],
        );
        await client.query('ROLLBACK');
        expect(Number(counts.rows[0]!.generic_plans), what).toBeGreaterThanOrEqual(7);
      }
    } finally {
      await client.query('ROLLBACK').catch(() => {});
      await client.query('DEALLOCATE ALL').catch(() => {});
      client.release();
    }
  });
  it('with 10,000 live counters, a save, a release and a renewal read the counters they name by primary key, not the table', async () => {
    const store = await freshStore();
    const names = tableNames(TEST_SCHEMA, store.table);
    // Migration 13: the primary key alone, room on each page for heap-only updates, never truncated.
    const indexes = await pool.query<{ indexname: string }>(
      'SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2',
      [TEST_SCHEMA, `${store.table}$flow`],
    );
    expect(indexes.rows.map((r) => r.indexname)).toEqual([`${store.table}$flow_pkey`]);
    const options = await pool.query<{ reloptions: string[] }>(
      `SELECT reloptions FROM pg_class WHERE oid = '${names.flow}'::regclass`,
    );
    expect(options.rows[0]!.reloptions).toEqual(['fillfactor=50', 'vacuum_truncate=false']);
    await pool.query(
      `INSERT INTO ${names.flow} (scope, key, period, lim, holds, waiting)
       SELECT 'wf/s' || (g % 10), 'k-' || (g / 10), 0, 4, jsonb_build_object('h-' || g, 2000000),
         CASE WHEN g % 100 = 0 THEN jsonb_build_object('w-' || g, '["i", 1]'::jsonb) ELSE '{}' END
       FROM generate_series(0, 9999) AS g`,
    );
    // inst-0's attempt of s1 holds a slot of (wf/s1, k-0) beside h-1; its next attempt takes (wf/s2, k-0).
    await store.create(makeTestSnapshot('inst-0'));
    await pool.query(
      `UPDATE ${names.flow} SET holds = holds || '{"inst-0/1/s1/1#run#1@1": 2000000}' WHERE scope = 'wf/s1' AND key = 'k-0'`,
    );
    await pool.query(`VACUUM ANALYZE ${names.flow}`);
    const pages = await pool.query<{ n: string }>(`SELECT pg_relation_size('${names.flow}') / 8192 AS n`);
    expect(Number(pages.rows[0]!.n)).toBeGreaterThan(150);
    const sql = storeStatements(names, 'unused_channel', 'text');
    const { RELEASE, RELEASE_AT, RENEW_AT } = flowStatements(names);
    const update = sql.save({ consume: false, match: false, notify: false });
    const save = savingFlowStatement(names, update, null, true);
    const client = await pool.connect();
    try {
      for (const mode of ['force_generic_plan', 'force_custom_plan']) {
        const read = async (text: string, values: unknown[]) =>
          flowReads(client, mode, text, values, names.flow);
        // The save releases inst-0's s1 attempt (its counter named) and takes its s2 attempt.
        const saved = await read(save, [
          ...['inst-0', 1, 2, 'running', 'wf', 1_000_000, 'wf@1@h', '', null, null, '{}'],
          ...['inst-0/1/s2/1#run#1@2', ['wf/s2'], ['k-0'], [0], [4], 1_000_000, 1_010_000],
          ...[['inst-0/1/s1/1#run#1@1'], ['wf/s1'], ['k-0'], [0]],
        ]);
        expect(saved.rows, mode).toEqual(2);
        const released = await read(RELEASE_AT, [
          ['h-5', 'w-100'],
          1_000_000,
          ['wf/s5', 'wf/s0'],
          ['k-0', 'k-10'],
          [0, 0],
        ]);
        expect(released.rows, mode).toEqual(2);
        const renewed = await read(RENEW_AT, [['h-15'], 3_000_000, ['wf/s5'], ['k-1'], [0]]);
        expect(renewed.rows, mode).toEqual(1);
        console.log(
          `flow blocks read (${mode}): save ${saved.blocks}, release ${released.blocks}, renew ${renewed.blocks}`,
        );
        // The short statement's move (flow-fast.ts): the same save, the two counters locked in key order.
        const move: FastShape = {
          release: { holder: 'inst-0/1/s1/1#run#1@1', scope: 'wf/s1', key: 'k-0' },
          take: { holder: 'inst-0/1/s2/1#run#1@2', scope: 'wf/s2', key: 'k-0', limit: 4, until: 1_010_000 },
        };
        const moved = await read(fastFlowStatement(names, 'move', update, null), [
          ...['inst-0', 1, 2, 'running', 'wf', 1_000_000, 'wf@1@h', '', null, null, '{}'],
          ...fastValues('move', move, 1_000_000),
        ]);
        expect(moved.rows, mode).toEqual(2);
        const taken = await read(
          fastFlowStatement(names, 'take', null, null),
          fastValues('take', { release: null, take: move.take }, 1_000_000),
        );
        expect(taken.rows, mode).toEqual(1);
        console.log(`flow blocks read (${mode}): short move ${moved.blocks}, short acquire ${taken.blocks}`);
        for (const [what, r] of Object.entries({ saved, released, renewed, moved, taken })) {
          expect(r.seqScans, `${what} (${mode})`).toEqual(0);
          expect(r.blocks, `${what} (${mode})`).toBeLessThan(40);
        }
        // A release that names no counters reads every counter (what a caller without them pays).
        const blind = await read(RELEASE, [['h-5'], 1_000_000]);
        console.log(`flow blocks read (${mode}): release naming no counters ${blind.blocks}`);
        expect(blind.blocks, mode).toBeGreaterThan(150);
      }
    } finally {
      await client.query('ROLLBACK').catch(() => {});
      client.release();
    }
  });
});

/** The plan nodes of an EXPLAIN (FORMAT JSON), flattened. */
type PlanNode = Record<string, unknown> & { Plans?: PlanNode[] };

/**
 * Runs `text` under EXPLAIN ANALYZE in a transaction rolled back, with `mode` as the plan cache
 * mode: the blocks its scans of `flow` read (hit or read), how many were sequential scans that
 * ran, and how many counter rows those scans returned to a write or a lock.
 */
async function flowReads(
  client: pg.PoolClient,
  mode: string,
  text: string,
  values: unknown[],
  flow: string,
): Promise<{ blocks: number; seqScans: number; rows: number }> {
  await client.query('BEGIN');
  try {
    await client.query(`SET LOCAL plan_cache_mode = ${mode}`);
    const r = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>({
      text: `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`,
      values,
    });
    const relation = flow.split('.')[1]!.replaceAll('"', '');
    const out = { blocks: 0, seqScans: 0, rows: 0 };
    const walk = (n: PlanNode, parent: PlanNode | undefined) => {
      const scan = n['Relation Name'] === relation && n['Node Type'] !== 'ModifyTable';
      if (scan && Number(n['Actual Loops']) > 0) {
        out.blocks += Number(n['Shared Hit Blocks']) + Number(n['Shared Read Blocks']);
        if (n['Node Type'] === 'Seq Scan') out.seqScans += 1;
        if (parent?.['Node Type'] === 'LockRows')
          out.rows += Number(n['Actual Rows']) * Number(n['Actual Loops']);
      }
      for (const c of n.Plans ?? []) walk(c, n);
    };
    walk(r.rows[0]!['QUERY PLAN'][0].Plan, undefined);
    return out;
  } finally {
    await client.query('ROLLBACK');
  }
}
