import { describe, expect, it } from 'vitest';
import { flowStatements, savingFlowStatement } from '../src/flow.js';
import { tableNames } from '../src/setup.js';
import { storeStatements } from '../src/statements.js';
import { TEST_SCHEMA } from './server.js';
import { useTestTables } from './test-tables.js';

// What the flow statements cost the server to plan: a limited task's save and a create's acquire
// are long statements, and a prepared statement planned again at every call costs more than it
// runs. Plan costs and plan counts, never times.

const { pool, store: freshStore } = useTestTables('fp');

/** The arguments of one save with flow work (`$1`-`$19`): `i` varies the values as calls do. */
function saveArgs(i: number): unknown[] {
  const take = i % 3 !== 2;
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
    i % 3 === 0 ? [] : [`inst-${i}/1/s1/1#run#1@1`],
  ];
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
        savingFlowStatement(names, sql.save({ consume: false, match: false, notify: false }), null),
        saveArgs,
      ],
      ['acquire', flowStatements(names).ACQUIRE, acquireArgs],
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
  it('release finds a holder among 10,000 counters through the partial GIN indexes of migration 12, not by reading the table', async () => {
    const store = await freshStore();
    const names = tableNames(TEST_SCHEMA, store.table);
    const indexes = await pool.query<{ indexname: string; indexdef: string }>(
      'SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 ORDER BY indexname',
      [TEST_SCHEMA, `${store.table}$flow`],
    );
    expect(indexes.rows.map((r) => r.indexname)).toEqual([
      `${store.table}$flow_pkey`,
      `${store.table}$flow_slots`,
      `${store.table}$flow_waiters`,
    ]);
    expect(indexes.rows[1]!.indexdef).toMatch(/USING gin \(holds\) WHERE \(period = 0\)/);
    expect(indexes.rows[2]!.indexdef).toMatch(/USING gin \(waiting\) WHERE \(waiting <> '\{\}'::jsonb\)/);
    await pool.query(
      `INSERT INTO ${names.flow} (scope, key, period, lim, holds, waiting)
       SELECT 'wf/s' || (g % 10), 'k-' || g, 0, 4, jsonb_build_object('h-' || g, 2000000),
         CASE WHEN g % 100 = 0 THEN jsonb_build_object('w-' || g, '["i", 1]'::jsonb) ELSE '{}' END
       FROM generate_series(0, 9999) AS g`,
    );
    await pool.query(`VACUUM ANALYZE ${names.flow}`);
    const client = await pool.connect();
    try {
      for (const mode of ['force_generic_plan', 'force_custom_plan']) {
        await client.query('BEGIN');
        await client.query(`SET LOCAL plan_cache_mode = ${mode}`);
        const r = await client.query<{ 'QUERY PLAN': unknown }>({
          text: `EXPLAIN (FORMAT JSON) ${flowStatements(names).RELEASE}`,
          values: [['h-5', 'w-100'], 1_000_000],
        });
        await client.query('ROLLBACK');
        const plan = JSON.stringify(r.rows[0]!['QUERY PLAN']);
        expect(plan, mode).toContain(`"Index Name":"${store.table}$flow_slots"`);
        expect(plan, mode).toContain(`"Index Name":"${store.table}$flow_waiters"`);
        expect(plan, mode).not.toContain('"Seq Scan"');
      }
    } finally {
      await client.query('ROLLBACK').catch(() => {});
      client.release();
    }
  });
});
