import { createPostgresStore, type PostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';
import { ensurePgDatabase, pgDatabaseUrl } from '../backends.js';
import { snapshotOfAbout } from '../payload.js';
import type { Group, Row } from '../row.js';
import { serviceUrls } from '../services.js';
import { largeRows, PER_CUSTOMER, searchRows, sizesOf, unmeasured } from './search-rows.js';

// Search: does `store.list({ where })` on the PostgreSQL store cost the same with a million
// instances stored as with ten thousand? Two tables exist at once, bulk-loaded through the store's
// own schema (its triggers fill the attribute table), each instance with a `customerId` (ten
// instances per customer on both tables, so a query returns the same ten rows on either) and a
// numeric `total` (unique per instance). Measured alternately (ABBA) through the adapter, one
// connection per table:
//   search-postgres         list({ where: { customerId }, limit: 50 }) of a random customer
//   search-postgres-range   list({ where: { total: { gte, lt } }, orderBy: 'total', limit: 50 })
//                           over a window of ten totals at a random place
// ratio = queries/s at 1,000,000 / at 10,000; a query served by an index keeps it near 1, one that
// reads the table falls with its size (a hundredfold).

const BENCH_DB = 'stepfold_bench';
const SCHEMA = 'stepfold_search';
const SNAPSHOT_BYTES = 1024;
/** Instances of the large table; STEPFOLD_SEARCH_ROWS shrinks it for a quick trial run. */
const LARGE = largeRows(1_000_000);
const SMALL = 10_000;
const BATCH = 100_000;

interface Table {
  name: 'small' | 'large';
  rows: number;
  pool: pg.Pool;
  store: PostgresStore;
}

/** The snapshot as SQL text with placeholders for the bulk load: the bench's ~1 KB snapshot with attributes. */
function template(): string {
  const base = snapshotOfAbout(SNAPSHOT_BYTES);
  return JSON.stringify({
    ...base,
    id: '@ID@',
    wakeAt: null,
    search: { customerId: '@CUST@', total: -1 },
  }).replace('"total":-1', '"total":@TOTAL@');
}

/**
 * Fills `t` with one INSERT … SELECT generate_series per batch; the store's triggers index `search`.
 * Then VACUUM marks every page all-visible, as on a table whose rows are not new, so the attribute
 * index's index-only scans read no table pages: the load commits synchronously (the shared server
 * commits asynchronously, and VACUUM cannot mark a row whose commit is not on disk yet) and
 * autovacuum stays off these tables (an ANALYZE of its own holds back which rows count as old).
 */
async function load(admin: pg.Pool, t: Table, text: string, log: (s: string) => void): Promise<void> {
  const q = `"${SCHEMA}"."${t.name}"`;
  for (const r of [q, `"${SCHEMA}"."${t.name}$search"`])
    await admin.query(`ALTER TABLE ${r} SET (autovacuum_enabled = false)`);
  for (let from = 0; from < t.rows; from += BATCH) {
    const to = Math.min(t.rows, from + BATCH) - 1;
    await admin.query(
      `INSERT INTO ${q} (id, version, status, workflow, wake_at, snapshot, search)
       SELECT r.id, 1, 'running', 'bench-search', NULL, replace(replace(replace($1, '@ID@', r.id),
           '@CUST@', r.cust), '@TOTAL@', r.g::text)::jsonb,
         jsonb_build_object('customerId', r.cust, 'total', r.g)
       FROM (SELECT g, 'i-' || lpad(g::text, 7, '0') AS id, 'c-' || (g % $2)::text AS cust
             FROM generate_series($3::int, $4::int) AS g) AS r`,
      [text, t.rows / PER_CUSTOMER, from, to],
    );
    log(`${t.name}: ${(to + 1).toLocaleString('en-US')} / ${t.rows.toLocaleString('en-US')} rows`);
  }
  await admin.query(`VACUUM ANALYZE ${q}`);
  await admin.query(`VACUUM ANALYZE "${SCHEMA}"."${t.name}$search"`);
  log(`${t.name}: vacuumed and analyzed`);
}

/** Pages VACUUM marked all-visible, as a share of each table's pages (1: every one). */
async function allVisible(admin: pg.Pool): Promise<Record<string, number>> {
  const r = await admin.query<{ name: string; share: number }>(
    `SELECT relname AS name, round(relallvisible::numeric / greatest(relpages, 1), 3)::float8 AS share
     FROM pg_class WHERE relnamespace = $1::regnamespace AND relkind = 'r' AND relpages > 0`,
    [`"${SCHEMA}"`],
  );
  return Object.fromEntries(r.rows.map((x) => [x.name, x.share]));
}

async function open(url: string, name: Table['name'], rows: number): Promise<Table> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const store = createPostgresStore({ pool, schema: SCHEMA, table: name });
  await store.setup();
  return { name, rows, pool, store };
}

async function run(): Promise<Row[]> {
  const url = pgDatabaseUrl(serviceUrls().pg, BENCH_DB);
  const start = performance.now();
  const log = (s: string) =>
    console.log(`  search-postgres · ${s} (${Math.round((performance.now() - start) / 1000)} s)`);
  const admin = new pg.Pool({ connectionString: url, max: 1, options: '-c synchronous_commit=on' });
  const tables: Table[] = [];
  try {
    process.stdout.write('\n');
    await admin.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
    const small = await open(url, 'small', SMALL);
    tables.push(small);
    const large = await open(url, 'large', LARGE);
    tables.push(large);
    const text = template();
    for (const t of tables) await load(admin, t, text, log);

    const size = await admin.query<{ name: string; bytes: string }>(
      `SELECT relname AS name, pg_total_relation_size(c.oid)::text AS bytes FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE nspname = $1 AND relkind = 'r'`,
      [SCHEMA],
    );
    const mb = Object.fromEntries(size.rows.map((r) => [r.name, Math.round(Number(r.bytes) / 2 ** 20)]));
    const sizes = `${sizesOf(LARGE, SMALL)} (${mb['large']} vs ${mb['small']} MB, attribute tables ${mb['large$search']} vs ${mb['small$search']} MB), one connection each, alternating`;
    return await searchRows({
      name: 'search-postgres',
      large: { name: 'large', rows: LARGE, store: large.store },
      small: { name: 'small', rows: SMALL, store: small.store },
      sizes,
      details: { largeRows: LARGE, smallRows: SMALL, mb, allVisible: await allVisible(admin) },
      log,
    });
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`).catch(() => {});
    for (const t of tables) await t.pool.end();
    await admin.end();
  }
}

/** The search rows: `list` with `where` (equality, and a range in order) at 1,000,000 stored instances against 10,000. */
export const searchPostgres: Group = {
  name: 'search-postgres',
  async run() {
    try {
      await ensurePgDatabase(serviceUrls().pg, BENCH_DB);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      return unmeasured('search-postgres', `not measured: no PostgreSQL (${why}); run \`pnpm services\``);
    }
    return run();
  },
};
