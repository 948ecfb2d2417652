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
});
