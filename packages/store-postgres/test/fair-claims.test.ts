import { describe, expect, it } from 'vitest';
import { createPostgresStore, type PostgresStore } from '../src/index.js';
import { recordingPool, TEST_SCHEMA } from './server.js';
import { useTestTables } from './test-tables.js';

// What a fair claim costs the server (migration 9): one key's backlog of 10,000 due rows and
// another key's one. The claim must find the light key's row at once and read about `limit` index
// entries, not the backlog. Counts of rows and buffers, never times: the plan is printed for the
// record (`pnpm exec vitest run packages/store-postgres/test/fair-claims.test.ts`).

const { pool, store: freshStore } = useTestTables('f');

/** A store on `table` whose pool records the text of every statement it sends. */
function spied(table: string, texts: string[]): PostgresStore {
  const spy = recordingPool(pool, (q) => texts.push(q.text));
  return createPostgresStore({ pool: spy, schema: TEST_SCHEMA, table });
}

/** `n` due rows of `key` (wake times `from` + i) in workflow `wf`, written as the store writes them. */
async function fill(table: string, key: string, n: number, from: number, wf = 'wf'): Promise<void> {
  await pool.query(
    `INSERT INTO "${TEST_SCHEMA}"."${table}" (id, version, status, workflow, wake_at, fair_key, snapshot_text)
     SELECT id, 1, 'waiting', $4, $3::bigint + g, $1,
       json_build_object('schemaVersion', 1, 'id', id, 'version', 1, 'status', 'waiting',
         'workflow', json_build_object('name', $4::text, 'version', 1, 'hash', 'h'),
         'wakeAt', $3::bigint + g, 'fairKey', $1::text)::text
     FROM generate_series(1, $2::int) AS g, LATERAL (SELECT $4 || '-' || $1 || '-' || lpad(g::text, 6, '0') AS id) AS x`,
    [key, n, from, wf],
  );
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  'Subplan Name'?: string;
  Plans?: PlanNode[];
}

const flatten = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(flatten)];

/** EXPLAIN (ANALYZE, BUFFERS) of a prepared claim, in a transaction rolled back: the plan as JSON and as text. */
async function explain(text: string, args: string, mode: string): Promise<{ root: PlanNode; lines: string }> {
  const client = await pool.connect();
  try {
    await client.query(`SET plan_cache_mode = ${mode}`);
    await client.query(`PREPARE fair_claim AS ${text}`);
    await client.query('BEGIN');
    const json = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE fair_claim(${args})`,
    );
    await client.query('ROLLBACK; BEGIN');
    const plain = await client.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE fair_claim(${args})`,
    );
    return {
      root: json.rows[0]!['QUERY PLAN'][0].Plan,
      lines: plain.rows.map((r) => r['QUERY PLAN']).join('\n'),
    };
  } finally {
    await client.query('ROLLBACK; DEALLOCATE fair_claim; RESET plan_cache_mode').catch(() => {});
    client.release();
  }
}

describe('postgres fair claims (migration 9)', () => {
  it("a claim over one key's 10,000 due rows and another key's one takes both keys' first and reads about limit index entries", async () => {
    const store = await freshStore();
    await fill(store.table, 'flood', 10_000, 1_000);
    await fill(store.table, 'light', 1, 50_000);
    // Another workflow's backlog of the same key: the lane reads past none of it.
    await fill(store.table, 'flood', 10_000, 60_000, 'other');
    await pool.query(`VACUUM ANALYZE "${TEST_SCHEMA}"."${store.table}"`);
    const texts: string[] = [];
    const poller = spied(store.table, texts);
    const now = 100_000;
    const limit = 10;
    // The light key's one row is second, however many of the flood's are due ahead of it.
    const first = await poller.claims.claimDue(now, limit, { workflow: 'wf', leaseMs: 0 });
    expect(first.map((s) => s.id)).toEqual([
      'wf-flood-000001',
      'wf-light-000001',
      ...Array.from({ length: limit - 2 }, (_, i) => `wf-flood-${String(i + 2).padStart(6, '0')}`),
    ]);
    await poller.claims.claimDue(now, limit, { leaseMs: 0 });
    const [lane, all] = texts.slice(-2) as [string, string];

    for (const [text, args] of [
      [lane, `${now}, ${now}, ${limit}, 'tok', 'wf'`],
      [all, `${now}, ${now}, ${limit}, 'tok'`],
    ] as const) {
      for (const mode of ['force_custom_plan', 'force_generic_plan']) {
        const { root, lines } = await explain(text, args, mode);
        console.log(`fair claim, ${text === lane ? 'lane' : 'all workflows'}, ${mode}:\n${lines}`);
        const nodes = flatten(root);
        const what = `${text === lane ? 'lane' : 'all'}, ${mode}`;
        // No scan of the instance table (`$fair`, a row per key, may be read whole).
        expect(
          nodes.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === store.table),
          what,
        ).toEqual([]);
        // Index entries read on the instance table's due indexes: the two keys' probes and heads,
        // and the rows picked (at most limit of the flood, 1 of the light key).
        const due = nodes.filter((n) => n['Index Name']?.endsWith('fair_due'));
        const read = due.reduce(
          (sum, n) => sum + n['Actual Rows']! * n['Actual Loops']! + (n['Rows Removed by Filter'] ?? 0),
          0,
        );
        expect(read, what).toBeGreaterThanOrEqual(limit);
        expect(read, what).toBeLessThanOrEqual(limit + 8);
        // Buffers of the parts that find and lock the rows (the UPDATE's index upkeep aside): a
        // few dozen pages, not the pages of the backlog's 10,000 rows.
        const blocks = nodes
          .filter((n) => ['CTE keys', 'CTE chosen', 'CTE picked'].includes(n['Subplan Name'] ?? ''))
          .reduce((sum, n) => sum + (n['Shared Hit Blocks'] ?? 0) + (n['Shared Read Blocks'] ?? 0), 0);
        console.log(`${what}: ${read} due index entries read, ${blocks} buffers to find and lock the rows`);
        expect(blocks, what).toBeGreaterThan(0);
        expect(blocks, what).toBeLessThan(100);
      }
    }
  });
  it("a claim's planned cost stays under PostgreSQL's JIT threshold on a large backlog, so no poll pays a JIT compile", async () => {
    // A LIMIT the planner cannot fold was guessed at a tenth of the due rows: on 1,000,000 rows a
    // poll of 100 was priced over 1,000,000, JIT-compiled (about 1.2 s) and ran in 1 ms.
    const store = await freshStore();
    await fill(store.table, 'flood', 100_000, 1_000);
    await fill(store.table, 'light', 10, 200_000);
    await pool.query(`VACUUM ANALYZE "${TEST_SCHEMA}"."${store.table}"`);
    const texts: string[] = [];
    const poller = spied(store.table, texts);
    const now = 1_000_000;
    const limit = 100;
    await poller.claims.claimDue(now, limit, { leaseMs: 0 });
    await poller.claims.claimDue(now, limit, { workflow: 'wf', leaseMs: 0 });
    const [all, lane] = texts.slice(-2) as [string, string];
    const client = await pool.connect();
    try {
      for (const [text, args] of [
        [all, `${now}, ${now}, ${limit}, 'tok'`],
        [lane, `${now}, ${now}, ${limit}, 'tok', 'wf'`],
      ] as const) {
        await client.query('SET plan_cache_mode = force_custom_plan');
        await client.query(`PREPARE cost_claim AS ${text}`);
        const plan = await client.query<{ 'QUERY PLAN': [{ Plan: { 'Total Cost': number } }] }>(
          `EXPLAIN (FORMAT JSON) EXECUTE cost_claim(${args})`,
        );
        await client.query('DEALLOCATE cost_claim');
        const cost = plan.rows[0]!['QUERY PLAN'][0].Plan['Total Cost'];
        console.log(
          `fair claim of ${limit} over 100,010 due rows (${text === lane ? 'lane' : 'all'}): planned cost ${cost}`,
        );
        // 100,000 is PostgreSQL's default jit_above_cost.
        expect(cost, text === lane ? 'lane' : 'all').toBeLessThan(100_000);
      }
    } finally {
      await client.query('RESET plan_cache_mode').catch(() => {});
      client.release();
    }
  });

  it("a poll's prepared statement keeps one generic plan on a large backlog, planned once, not at every poll", async () => {
    // The server plans a prepared statement's first five executions for their values, then keeps a
    // generic plan unless it is priced above theirs. With the per-key LIMIT the parameter alone,
    // the generic plan guessed a tenth of the due rows per key (priced past 1,000,000 on 1,000,000
    // rows, JIT-compiled), so every poll of a large table was planned again (0.5-3 ms a poll).
    const store = await freshStore();
    await fill(store.table, 'flood', 100_000, 1_000);
    await fill(store.table, 'light', 10, 200_000);
    await pool.query(`VACUUM ANALYZE "${TEST_SCHEMA}"."${store.table}"`);
    const texts: string[] = [];
    const poller = spied(store.table, texts);
    const now = 1_000_000;
    const limit = 100;
    await poller.listDue(now, limit, { leaseMs: 0 });
    await poller.listDue(now, limit, { workflow: 'wf', leaseMs: 0 });
    await poller.claims.claimDue(now, limit, { leaseMs: 0 });
    await poller.claims.claimDue(now, limit, { workflow: 'wf', leaseMs: 0 });
    const forms = texts.slice(-4) as string[];
    const client = await pool.connect();
    try {
      for (const [k, text] of forms.entries()) {
        const what = ['listDue', 'listDue lane', 'claimDue', 'claimDue lane'][k]!;
        const args = `${now}, ${now}, ${limit}, 'tok'${k % 2 ? ", 'wf'" : ''}`;
        await client.query(`PREPARE generic_poll AS ${text}`);
        const cost = async (mode: string) => {
          await client.query(`SET plan_cache_mode = ${mode}`);
          const plan = await client.query<{ 'QUERY PLAN': [{ Plan: { 'Total Cost': number } }] }>(
            `EXPLAIN (FORMAT JSON) EXECUTE generic_poll(${args})`,
          );
          await client.query('RESET plan_cache_mode');
          return plan.rows[0]!['QUERY PLAN'][0].Plan['Total Cost'];
        };
        const [generic, custom] = [await cost('force_generic_plan'), await cost('force_custom_plan')];
        console.log(
          `${what} of ${limit} over 100,010 due rows: generic plan cost ${generic}, custom ${custom}`,
        );
        expect(generic, what).toBeLessThan(100_000);
        expect(generic, what).toBeLessThanOrEqual(custom);
        // Eight polls as the store runs them (default plan_cache_mode): from the sixth on, generic.
        for (let i = 0; i < 8; i++) {
          await client.query('BEGIN');
          const r = await client.query(`EXECUTE generic_poll(${args})`);
          await client.query('ROLLBACK');
          expect(r.rows.length, what).toBe(limit);
        }
        const counts = await client.query<{ generic_plans: string; custom_plans: string }>(
          "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = 'generic_poll'",
        );
        expect(Number(counts.rows[0]!.generic_plans), what).toBeGreaterThanOrEqual(3);
        await client.query('DEALLOCATE generic_poll');
      }
    } finally {
      await client.query('ROLLBACK; RESET plan_cache_mode').catch(() => {});
      await client.query('DEALLOCATE ALL').catch(() => {});
      client.release();
    }
  });
});
