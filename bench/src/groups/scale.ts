import { randomBytes, randomUUID } from 'node:crypto';
import type { Snapshot } from '@stepfold/engine';
import { createPostgresStore, type PostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';
import { ensurePgDatabase, pgDatabaseUrl } from '../backends.js';
import { compareAsync, median, type Rate } from '../measure.js';
import { snapshotOfAbout } from '../payload.js';
import { type Group, type Row, rateRow } from '../row.js';
import { serviceUrls } from '../services.js';

// Scale: does the PostgreSQL store cost the same with a million instances stored as with ten
// thousand? Two tables exist at once, bulk-loaded with realistic ~2 KB snapshots: `small`
// (10,000 instances, 1,000 of them due) and `large` (1,000,000, 100,000 due). Each operation is
// measured on both, alternately (ABBA, like every contender pair in this bench), through the
// adapter on one connection per table:
//   create   store.create of a fresh snapshot (a random id, like a uuid-keyed order)
//   save     conditional store.save of an existing instance, at random among 9,000 active ones
//   listDue  store.listDue(now, 100) over the whole table
// ratio = rate at 1,000,000 / rate at 10,000; an index-served store keeps it near 1.
//
// Saves go to the same number of active instances on both tables (the small table's 9,000 not-due
// ones; 9,000 scattered through the large one), so the row measures what the 990,000 instances at
// rest cost the live ones. Saves spread uniformly over all 1,000,000 would measure instead how much
// of the table the server caches (this test server has 256 MB of shared_buffers for ~1.5 GB).
//
// listDue claims what it returns, so polling one fixed `now` would drain the due set (the small
// table's 1,000 due rows are gone after 10 polls, the large one's after 1,000) and then measure
// scans past claimed rows instead. The stores use claimMs 0: a claim lapses at once, so every
// poll finds, locks and re-claims the earliest 100 due rows, the full work of a poll, the same on
// both tables for as long as the measurement runs. Since migration 5 the store orders rows by when
// they are due again, a claim's expiry once claimed: a lease-0 claim moves its rows to `now`,
// behind the others due, so the first polls walk the whole due set once (1,000 on the large table,
// 10 on the small one) and leave an index entry behind for each row, dead but read by every later
// poll until a vacuum. That walk is done before measuring, and both tables are then rewritten
// (VACUUM FULL: a plain VACUUM would leave the large table 100 times the free space to take the
// polls' new row versions, and the two tables would churn differently): then each poll re-claims
// the same earliest 100 as before.
//
// That churn (100 rows rewritten ~1,500 times a second) is the bench's, not a worker's, and it
// passes autovacuum's threshold on the large table within two seconds: a VACUUM of its 1.5 GB and
// five indexes then started during some listDue measurements (seen in pg_stat_activity) and not
// others. Runs whose large-table polls halved mid-row (0.503, 0.59) fit that; others read
// 0.94–0.98. Both tables are
// VACUUM ANALYZEd after loading and autovacuum is off for both while they are measured (each page's
// dead versions are still pruned as the polls read it); they are dropped afterwards.
//
// listdue-claimed, measured last: after a vacuum (of the save and create rows' churn), a tenth of
// each table's due instances (10,000 vs 100) are claimed for an hour, the earliest in the due
// order, as a fleet with runs in flight (or workers killed holding claims) leaves them; then the
// same lease-0 polls. The same share on both tables, so a poll whose cost does not depend on what
// is claimed keeps the ratio near 1, and one that walks past the claims walks 100 times as many
// on the large table. The entries the claims left behind are not vacuumed: the polls meet them.

const BENCH_DB = 'stepfold_bench';
const SCHEMA = 'stepfold_scale';
const SNAPSHOT_BYTES = 2048;
/** Instances of the large table; STEPFOLD_SCALE_ROWS shrinks it for a quick trial run. */
const LARGE = Number(process.env['STEPFOLD_SCALE_ROWS'] ?? 1_000_000);
const SMALL = 10_000;
/** One instance in ten is due. */
const DUE_SHARE = 10;
/** Instances the save measurement writes to, on either table: all of the small one's not due. */
const ACTIVE = SMALL - SMALL / DUE_SHARE;
const BATCH = 100_000;
const LIMIT = 100;
/** listdue-claimed: one due instance in ten held, for longer than the run. */
const HELD_SHARE = 10;
const HELD_MS = 3_600_000;

/** Wake times: due rows from T0 on (now = T0 + due), the others a day or more later. */
const T0 = 1_700_000_000_000;
const LATER = T0 + 86_400_000;

const idOf = (i: number) => `i-${String(i).padStart(7, '0')}`;

interface Table {
  name: 'small' | 'large';
  rows: number;
  due: number;
  now: number;
  pool: pg.Pool;
  store: PostgresStore;
  /** The instances saves go to (numbers of not-due rows), and their versions (all start at 1). */
  active: number[];
  versions: number[];
}

/**
 * The payload: the bench's 2 KB snapshot with its padding replaced by random hex, so it stays ~2 KB
 * on disk too (PostgreSQL compresses the bench's `x…x` padding to nothing). 256 pads, rotated.
 */
function payloads() {
  const base = snapshotOfAbout(SNAPSHOT_BYTES);
  const input = base.input as { customer: string; note: string };
  const padLength = input.note.length;
  const pads = Array.from({ length: 256 }, () => randomBytes(padLength).toString('hex').slice(0, padLength));
  let k = 0;
  const make = (id: string, version: number, wakeAt: number | null): Snapshot => ({
    ...base,
    id,
    version,
    wakeAt,
    input: { ...input, note: pads[k++ & 255]! },
  });
  // The same snapshot as SQL text with placeholders, for the bulk load.
  const template = JSON.stringify({
    ...base,
    id: '@ID@',
    wakeAt: -1,
    input: { ...input, note: '@PAD@' },
  }).replace('"wakeAt":-1', '"wakeAt":@WAKE@');
  return { base, make, template, padLength };
}

/** Fills `table` with `rows` instances in batches of one INSERT … SELECT generate_series each. */
async function load(admin: pg.Pool, t: Table, template: string, padLength: number, log: (s: string) => void) {
  const q = `"${SCHEMA}"."${t.name}"`;
  const chunks = Math.ceil(padLength / 32);
  for (let from = 0; from < t.rows; from += BATCH) {
    const to = Math.min(t.rows, from + BATCH) - 1;
    await admin.query(
      `INSERT INTO ${q} (id, version, status, workflow, wake_at, snapshot)
       SELECT r.id, 1, 'running', $2, r.wake,
         replace(replace(replace($1, '@ID@', r.id), '@WAKE@', r.wake::text), '@PAD@', r.pad)::jsonb
       FROM (
         SELECT 'i-' || lpad(g::text, 7, '0') AS id,
           CASE WHEN g < $5 THEN $6::bigint + g ELSE $7::bigint + g END AS wake,
           (SELECT left(string_agg(md5(g::text || ':' || k::text), ''), $8)
              FROM generate_series(1, $9) AS k) AS pad
         FROM generate_series($3::int, $4::int) AS g) AS r`,
      [template, 'bench-linear', from, to, t.due, T0, LATER, padLength, chunks],
    );
    log(`${t.name}: ${(to + 1).toLocaleString('en-US')} / ${t.rows.toLocaleString('en-US')} rows`);
  }
  await admin.query(`VACUUM ANALYZE ${q}`);
  // See the header: the measurement's own churn must not start a vacuum of one table mid-row.
  await admin.query(`ALTER TABLE ${q} SET (autovacuum_enabled = false)`);
  log(`${t.name}: vacuumed and analyzed`);
}

async function open(url: string, name: Table['name'], rows: number): Promise<Table> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const store = createPostgresStore({ pool, schema: SCHEMA, table: name, claimMs: 0 });
  await store.setup();
  const due = rows / DUE_SHARE;
  // ACTIVE distinct not-due rows: all of them on the small table, scattered on the large one.
  const pick = new Set<number>();
  while (pick.size < ACTIVE) pick.add(due + Math.floor(Math.random() * (rows - due)));
  const active = [...pick];
  return { name, rows, due, now: T0 + due, pool, store, active, versions: active.map(() => 1) };
}

function row(name: string, unit: string, large: Rate, small: Rate, note: string, extra: object): Row {
  return rateRow(`scale-postgres-${name}`, large.hz, small.hz, unit, 0.8, {
    note,
    details: {
      largeSamples: large.samples.map(Math.round),
      smallSamples: small.samples.map(Math.round),
      // Each round measures both sizes back to back: the median of those ratios resists drift.
      roundRatioMedian: Math.round(median(large.samples.map((x, i) => x / small.samples[i]!)) * 1000) / 1000,
      ...extra,
    },
  });
}

async function run(): Promise<Row[]> {
  const url = pgDatabaseUrl(serviceUrls().pg, BENCH_DB);
  const start = performance.now();
  const log = (s: string) =>
    console.log(`  scale-postgres · ${s} (${Math.round((performance.now() - start) / 1000)} s)`);
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  const tables: Table[] = [];
  try {
    process.stdout.write('\n');
    // A crashed earlier run may have left its tables behind.
    await admin.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
    const small = await open(url, 'small', SMALL);
    tables.push(small);
    const large = await open(url, 'large', LARGE);
    tables.push(large);
    const p = payloads();
    for (const t of tables) await load(admin, t, p.template, p.padLength, log);
    const size = await admin.query<{ name: string; bytes: string }>(
      `SELECT relname AS name, pg_total_relation_size(c.oid)::text AS bytes FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE nspname = $1 AND relkind = 'r'`,
      [SCHEMA],
    );
    const mb = Object.fromEntries(size.rows.map((r) => [r.name, Math.round(Number(r.bytes) / 2 ** 20)]));

    const vacuum = async (full = false) => {
      for (const t of tables) await admin.query(`VACUUM ${full ? 'FULL ' : ''}"${SCHEMA}"."${t.name}"`);
    };
    // Each poll's lease-0 claim moves its rows behind the others due: walk the due set once, then
    // rewrite both tables as the load left them, packed, without the entries that walk left behind
    // (see the header).
    for (const t of tables) {
      const got = await t.store.listDue(t.now, LIMIT);
      if (got.length !== LIMIT || got[0] !== idOf(0))
        throw new Error(`${t.name}: listDue gave ${got.length} ids`);
      for (let k = LIMIT; k < t.due; k += LIMIT) await t.store.listDue(t.now, LIMIT);
    }
    await vacuum(true);
    log('walked the due set once and vacuumed (full)');
    const options = { concurrency: 1, warmupMs: 300, sampleMs: 500, samples: 12 };
    const listDue = (t: Table) => () => t.store.listDue(t.now, LIMIT);
    const save = (t: Table) => async () => {
      // A random active instance; its wake time stays where the load put it (not due).
      const k = Math.floor(Math.random() * ACTIVE);
      const i = t.active[k]!;
      const v = t.versions[k]!;
      await t.store.save(p.make(idOf(i), v + 1, LATER + i), v);
      t.versions[k] = v + 1;
    };
    // Created instances wake later, as the instances at rest do: not due on either table. (They
    // woke at the template's time, due on the large table only: its listdue-claimed polls then met
    // the dead entries of the thousands of them the polls moved, and the small table's of none.)
    const create = (t: Table) => () => t.store.create(p.make(`n-${randomUUID()}`, 1, LATER));

    log('measuring listDue');
    const [dl, ds] = await compareAsync(listDue(large), listDue(small), options);
    log('measuring save');
    const [sl, ss] = await compareAsync(save(large), save(small), options);
    log('measuring create');
    const [cl, cs] = await compareAsync(create(large), create(small), options);
    log('measuring listDue past claimed instances');
    await vacuum(); // what the save and create rows left
    const held = (t: Table) => Math.floor(t.due / HELD_SHARE);
    for (const t of tables) {
      const got = await t.store.listDue(t.now, held(t), { leaseMs: HELD_MS });
      if (got.length !== held(t)) throw new Error(`${t.name}: claimed ${got.length} ids`);
    }
    const [hl, hs] = await compareAsync(listDue(large), listDue(small), options);
    const counts = await admin.query<{ name: string; n: string }>(
      `SELECT 'small' AS name, count(*)::text AS n FROM "${SCHEMA}".small
       UNION ALL SELECT 'large', count(*)::text FROM "${SCHEMA}".large`,
    );
    const after = Object.fromEntries(counts.rows.map((r) => [r.name, Number(r.n)]));

    const sizes = `${LARGE.toLocaleString('en-US')} vs ${SMALL.toLocaleString('en-US')} instances (${mb['large']} vs ${mb['small']} MB with indexes), ${SNAPSHOT_BYTES} B snapshots, one connection each, alternating`;
    const extra = { largeRows: LARGE, smallRows: SMALL, largeMB: mb['large'], smallMB: mb['small'] };
    return [
      row('create', 'creates/s', cl, cs, `store.create of a fresh snapshot; ${sizes}`, {
        ...extra,
        rowsAfter: after,
      }),
      row(
        'save',
        'saves/s',
        sl,
        ss,
        `conditional store.save of a random one of ${ACTIVE.toLocaleString('en-US')} active instances; ${sizes}`,
        extra,
      ),
      row(
        'listdue',
        'polls/s',
        dl,
        ds,
        `store.listDue(now, ${LIMIT}) with ${(LARGE / DUE_SHARE).toLocaleString('en-US')} vs ${(SMALL / DUE_SHARE).toLocaleString('en-US')} due, claimMs 0 (each poll re-claims the earliest ${LIMIT}); ${sizes}`,
        extra,
      ),
      row(
        'listdue-claimed',
        'polls/s',
        hl,
        hs,
        `the same polls with the earliest ${held(large).toLocaleString('en-US')} vs ${held(small).toLocaleString('en-US')} due instances claimed for an hour; ${sizes}`,
        { ...extra, largeHeld: held(large), smallHeld: held(small) },
      ),
    ];
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`).catch(() => {});
    for (const t of tables) await t.pool.end();
    await admin.end();
  }
}

/** The scale rows: create, save and listDue (also past claimed instances) at 1,000,000 stored instances against 10,000. */
export const scalePostgres: Group = {
  name: 'scale-postgres',
  async run() {
    try {
      await ensurePgDatabase(serviceUrls().pg, BENCH_DB);
    } catch (e) {
      const note = `not measured: no PostgreSQL (${e instanceof Error ? e.message : String(e)}); run \`pnpm services\``;
      return ['create', 'save', 'listdue', 'listdue-claimed'].map((n) => ({
        ...rateRow(`scale-postgres-${n}`, null, null, n.startsWith('listdue') ? 'polls/s' : `${n}s/s`, 0.8),
        note,
      }));
    }
    return run();
  },
};
