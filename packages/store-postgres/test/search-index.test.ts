import { makeTestSnapshot } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { createPostgresStore } from '../src/index.js';
import { PG_URL, TEST_SCHEMA, testPool } from './server.js';
import { useTestTables } from './test-tables.js';

// `list` with `where` reads the `$search` index (migration 10), not the instances: on a table of
// 100,000 instances, EXPLAIN ANALYZE of the statement the store sends shows index scans only and
// about as many rows read as match; ordered by a filtered attribute, no sort and a page's rows.

const { pool, store } = useTestTables('srch');

const N = 100_000;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/** Fills the table with N instances in one statement: customer `c-(g mod 10000)`, total g. */
async function fill(table: string): Promise<void> {
  const template = JSON.stringify(
    makeTestSnapshot('__ID__', {
      workflow: { name: 'order', version: 1, hash: 'h' },
      search: { customerId: '__C__', total: 7 },
    }),
  );
  await pool.query(
    `INSERT INTO "${TEST_SCHEMA}"."${table}" (id, version, status, workflow, definition, fair_key, search, snapshot_text)
     SELECT 'i-' || lpad(g::text, 6, '0'), 1, 'running', 'order', 'order@1@h', '',
       jsonb_build_object('customerId', 'c-' || (g % 10000), 'total', g),
       replace(replace(replace($1, '__ID__', 'i-' || lpad(g::text, 6, '0')), '__C__', 'c-' || (g % 10000)), '"total":7', '"total":' || g)
     FROM generate_series(1, ${N}) g`,
    [template],
  );
  await pool.query(`ANALYZE "${TEST_SCHEMA}"."${table}"`);
  await pool.query(`ANALYZE "${TEST_SCHEMA}"."${table}$search"`);
}

describe('postgres search index', () => {
  it('where and orderBy on 100,000 instances read the matching index entries, not the table', async () => {
    const s = await store();
    await fill(s.table);
    const sent: Array<{ text: string; values: unknown[] }> = [];
    // A second store over the same table whose pool records the statements it sends.
    const recording = new Proxy(pool, {
      get(target, key, receiver) {
        if (key !== 'query') return Reflect.get(target, key, receiver);
        return (q: { text: string; values?: unknown[] } | string, values?: unknown[]) => {
          if (typeof q === 'object') sent.push({ text: q.text, values: q.values ?? [] });
          return target.query(q as never, values as never);
        };
      },
    });
    const reader = createPostgresStore({ pool: recording, schema: TEST_SCHEMA, table: s.table });
    const explain = async (query: Parameters<typeof reader.list>[0], expected: string[]) => {
      sent.length = 0;
      const page = await reader.list(query);
      expect(page.items.map((x) => x.id)).toEqual(expected);
      const statement = sent.at(-1)!;
      const r = await pool.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${statement.text}`,
        statement.values,
      );
      const all = nodes(r.rows[0]!['QUERY PLAN'][0]!.Plan);
      const scans = all.filter((n) => n['Relation Name'] !== undefined);
      expect(all.map((n) => n['Node Type']).filter((t) => t === 'Seq Scan')).toEqual([]);
      expect(all.some((n) => n['Index Name'] === `${s.table}$search_value`)).toBe(true);
      // Rows the scans read (returned or filtered out), over every loop: about the matches, far
      // from the table's 100,000.
      const read = scans.reduce(
        (sum, n) => sum + (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0)) * n['Actual Loops'],
        0,
      );
      sorts = all.filter((n) => n['Node Type'] === 'Sort' || n['Node Type'] === 'Incremental Sort').length;
      return read;
    };
    let sorts = 0;
    const ofCustomer = Array.from({ length: 10 }, (_, i) => `i-${String(42 + i * 10_000).padStart(6, '0')}`);
    expect(await explain({ limit: 50, where: { customerId: 'c-42' } }, ofCustomer)).toBeLessThan(50);
    const range = Array.from({ length: 21 }, (_, i) => `i-${String(500 + i).padStart(6, '0')}`);
    expect(await explain({ limit: 50, where: { total: { gte: 500, lte: 520 } } }, range)).toBeLessThan(100);
    expect(
      await explain(
        { limit: 5, where: { total: { gte: 500, lte: 520 } }, orderBy: { field: 'total', desc: true } },
        ['i-000520', 'i-000519', 'i-000518', 'i-000517', 'i-000516'],
      ),
    ).toBeLessThan(100);
    // Ordered by the attribute of the range: its index range read in order, stopped at the page,
    // even when the range holds most of the table (no sort of every match, no second entry read).
    const wide = { total: { gte: 500, lt: 90_000 } };
    expect(
      await explain({ limit: 5, where: wide, orderBy: 'total' }, [
        'i-000500',
        'i-000501',
        'i-000502',
        'i-000503',
        'i-000504',
      ]),
    ).toBeLessThan(20);
    expect(sorts).toBe(0);
    expect(
      await explain({ limit: 3, where: wide, orderBy: { field: 'total', desc: true } }, [
        'i-089999',
        'i-089998',
        'i-089997',
      ]),
    ).toBeLessThan(20);
    expect(sorts).toBe(0);
    expect(
      await explain({ limit: 3, where: { customerId: { in: ['c-1', 'c-2'] }, status: 'running' } }, [
        'i-000001',
        'i-000002',
        'i-010001',
      ]),
    ).toBeLessThan(100);
    // A later page starts its index range at the cursor: it does not read every entry before it.
    // (The cursor text is the store's `[value, id]`, made here to start deep in the range.)
    const deep = (value: number | string, id: string) => JSON.stringify([value, id]);
    expect(
      await explain({ limit: 3, where: wide, orderBy: 'total', cursor: deep(60_000, 'i-060000') }, [
        'i-060001',
        'i-060002',
        'i-060003',
      ]),
    ).toBeLessThan(20);
    expect(
      await explain(
        { limit: 3, where: wide, orderBy: { field: 'total', desc: true }, cursor: deep(60_000, 'i-060000') },
        ['i-059999', 'i-059998', 'i-059997'],
      ),
    ).toBeLessThan(20);
    // Ordered by an attribute no condition names (its own join): the same from a cursor, by
    // kind and value, and for a string (after c-8's last instance comes c-80, in byte order).
    expect(
      await explain(
        { limit: 2, where: { status: 'running' }, orderBy: 'total', cursor: deep(70_000, 'i-070000') },
        ['i-070001', 'i-070002'],
      ),
    ).toBeLessThan(20);
    expect(
      await explain(
        {
          limit: 2,
          where: { status: 'running' },
          orderBy: { field: 'total', desc: true },
          cursor: deep(70_000, 'i-070000'),
        },
        ['i-069999', 'i-069998'],
      ),
    ).toBeLessThan(20);
    expect(
      await explain(
        { limit: 2, where: { status: 'running' }, orderBy: 'customerId', cursor: deep('c-8', 'i-090008') },
        ['i-000080', 'i-010080'],
      ),
    ).toBeLessThan(20);
    await reader.close();

    // Ordered by the range's attribute alone: after the server's five trial plans, the statement
    // runs on one cached generic plan instead of being planned again for each call's values.
    const one = testPool(PG_URL, 1);
    try {
      const connection = createPostgresStore({ pool: one, schema: TEST_SCHEMA, table: s.table });
      for (let i = 0; i < 8; i++)
        await connection.list({
          limit: 5,
          where: { total: { gte: 1000 * i, lt: 1000 * i + 10 } },
          orderBy: 'total',
        });
      const plans = await one.query<{ generic: number; custom: number }>(
        `SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements
         WHERE statement LIKE '%$search%'`,
      );
      expect(plans.rows).toEqual([{ generic: 3, custom: 5 }]);
    } finally {
      await one.end();
    }
  }, 120_000);
});
