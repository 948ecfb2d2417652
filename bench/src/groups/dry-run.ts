import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { defineWorkflow, type Snapshot, type Store, step, type WorkflowDefinition } from '@stepfold/engine';
import { defineMigration, dryRunMigration } from '@stepfold/engine/migrations';
import { createPostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';
import { ensurePgDatabase, pgDatabaseUrl } from '../backends.js';
import { type Group, type Row, rateRow } from '../row.js';
import { serviceUrls } from '../services.js';

// The fleet-wide migration dry run over N stored PostgreSQL instances (STEPFOLD_DRYRUN_N, default
// 1,000,000): `dryRunMigration` pages through them with `store.list`, plans each migration in
// memory (step rules, data recipe, validation, one reducer tick) and keeps only counts, reasons
// with samples and the largest snapshot. The row is its rate; what it must show is memory that
// stays flat: heapUsed and rss are sampled after every page (start, peak, end in the details).
//
// The instances are seeded server-side, one INSERT … SELECT generate_series per 100,000, from four
// snapshot templates the reducer built (the id spliced in): 70% waiting in `approve` (renamed in
// v2: migratable), 10% waiting in `legacy` (removed in v2: refused), 10% with `reserve`'s task in
// flight (v2 runs another handler there: refused), 10% completed (skipped). The table is kept
// between runs (its own schema) and reseeded only when its count differs from N.
//
// The baseline is reading the same pages with `store.list` and nothing else, once before the dry
// run and once after (the faster counts): the ratio says how much of the read rate the planning
// keeps.

const BENCH_DB = 'stepfold_bench';
const SCHEMA = 'stepfold_dryrun';
const TABLE = 'instances';
const N = Number(process.env['STEPFOLD_DRYRUN_N'] ?? 1_000_000);
const BATCH = 100_000;
const PAGE = 1_000;

const v1 = defineWorkflow({
  name: 'dryrun-order',
  version: 1,
  start: 'route',
  steps: {
    route: {
      kind: 'choice',
      branches: [{ when: { var: 'input.legacy' }, next: 'legacy' }],
      otherwise: 'reserve',
    },
    reserve: { kind: 'task', handler: 'reserve', compensate: 'release', next: 'approve' },
    approve: { kind: 'human', next: 'ship' },
    ship: { kind: 'task', handler: 'ship' },
    legacy: { kind: 'wait', signal: 'manual' },
  },
});

const v2 = defineWorkflow({
  name: 'dryrun-order',
  version: 2,
  start: 'route',
  steps: {
    route: {
      kind: 'choice',
      branches: [{ when: { var: 'input.express' }, next: 'reserve' }],
      otherwise: 'reserve',
    },
    reserve: { kind: 'task', handler: 'reserveV2', compensate: 'release', next: 'review' },
    review: { kind: 'human', signal: 'approve', next: 'ship' },
    ship: { kind: 'task', handler: 'ship' },
  },
});

const toV2 = defineMigration({
  from: v1,
  to: v2,
  steps: { approve: 'review', legacy: null },
  data(draft) {
    draft.input.currency ??= 'EUR';
  },
});

const ID = '@ID@';

/** The four template snapshots, built by the reducer, for the id placeholder. */
function templates(def: WorkflowDefinition): Snapshot[] {
  const at = 1_700_000_000_000;
  const start = (input: object) =>
    step(def, null, { type: 'start', at, id: ID, input: { sku: 'SKU-1', lines: [1, 2, 3], ...input } });
  const inFlight = start({});
  const done = (s: Snapshot, name: string) =>
    step(def, s, {
      type: 'task.completed',
      at: at + 1,
      step: name,
      attempt: 1,
      key: s.tasks[name]!.idempotencyKey,
      output: { ok: name },
    });
  const waiting = done(inFlight, 'reserve');
  const approved = step(def, waiting, {
    type: 'signal',
    at: at + 2,
    name: 'approve',
    payload: { decision: 'approve' },
  });
  const completed = done(approved, 'ship');
  return [waiting, start({ legacy: true }), inFlight, completed];
}

/** Seeds N instances unless the table already holds exactly N; returns whether it seeded. */
async function seed(pool: pg.Pool, log: (s: string) => void): Promise<boolean> {
  const q = `"${SCHEMA}"."${TABLE}"`;
  const { rows } = await pool.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${q}`);
  if (Number(rows[0]!.n) === N) return false;
  await pool.query(`TRUNCATE ${q}`);
  const [a, b, c, d] = templates(v1).map((s) => ({
    json: JSON.stringify(s),
    status: s.status,
    wake: s.wakeAt,
  }));
  for (let from = 0; from < N; from += BATCH) {
    const to = Math.min(N, from + BATCH) - 1;
    // g % 10: 0..6 waiting in approve, 7 in legacy, 8 a task in flight, 9 completed.
    await pool.query(
      `INSERT INTO ${q} (id, version, status, workflow, wake_at, snapshot)
       SELECT t.id, 1, t.status, $1, t.wake, replace(t.json, '@ID@', t.id)::jsonb
       FROM (
         SELECT 'd-' || lpad(g::text, 8, '0') AS id,
           CASE WHEN g % 10 < 7 THEN $2 WHEN g % 10 = 7 THEN $5 WHEN g % 10 = 8 THEN $8 ELSE $11 END AS json,
           CASE WHEN g % 10 < 7 THEN $3 WHEN g % 10 = 7 THEN $6 WHEN g % 10 = 8 THEN $9 ELSE $12 END AS status,
           CASE WHEN g % 10 < 7 THEN $4::bigint WHEN g % 10 = 7 THEN $7::bigint WHEN g % 10 = 8 THEN $10::bigint ELSE $13::bigint END AS wake
         FROM generate_series($14::int, $15::int) AS g) AS t`,
      [
        v1.name,
        a!.json,
        a!.status,
        a!.wake,
        b!.json,
        b!.status,
        b!.wake,
        c!.json,
        c!.status,
        c!.wake,
        d!.json,
        d!.status,
        d!.wake,
        from,
        to,
      ],
    );
    log(`seeded ${(to + 1).toLocaleString('en-US')} / ${N.toLocaleString('en-US')}`);
  }
  await pool.query(`VACUUM ANALYZE ${q}`);
  return true;
}

/**
 * A full collection, so the heap sampled is what the run retains rather than garbage V8 has not
 * collected yet (the flag works at run time; `pnpm bench` passes no node flags).
 */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Instances per second of paging through every instance with `store.list` alone. */
async function readRate(store: Store): Promise<number> {
  const t0 = performance.now();
  let n = 0;
  let cursor: string | null = null;
  do {
    const page = await store.list({ workflow: v1.name, limit: PAGE, cursor });
    n += page.items.length;
    cursor = page.cursor;
  } while (cursor);
  if (n !== N) throw new Error(`read ${n} of ${N} instances`);
  return n / ((performance.now() - t0) / 1000);
}

const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

async function run(): Promise<Row[]> {
  const base = serviceUrls().pg;
  await ensurePgDatabase(base, BENCH_DB);
  const pool = new pg.Pool({ connectionString: pgDatabaseUrl(base, BENCH_DB), max: 2 });
  const began = performance.now();
  const log = (s: string) =>
    console.log(`  dry-run-postgres · ${s} (${Math.round((performance.now() - began) / 1000)} s)`);
  try {
    process.stdout.write('\n');
    const store = createPostgresStore({ pool, schema: SCHEMA, table: TABLE });
    await store.setup();
    const seeded = await seed(pool, log);
    log(seeded ? 'seeded' : `table already holds ${N.toLocaleString('en-US')} instances`);

    const readBefore = await readRate(store);
    log(`read alone: ${Math.round(readBefore).toLocaleString('en-US')} instances/s`);
    const gc = collector();
    gc();
    const start = process.memoryUsage();
    const peak = { heapUsed: start.heapUsed, rss: start.rss, retained: start.heapUsed };
    let pages = 0;
    const report = await dryRunMigration(store, toV2, {
      pageSize: PAGE,
      onProgress: (p) => {
        const m = process.memoryUsage();
        peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed);
        peak.rss = Math.max(peak.rss, m.rss);
        if (++pages % 50 !== 0 && p.read !== N) return;
        // Every 50 pages: what survives a full collection (the run's own state), and the progress.
        gc();
        const kept = process.memoryUsage().heapUsed;
        peak.retained = Math.max(peak.retained, kept);
        log(
          `${p.read.toLocaleString('en-US')} read · ${p.migratable.toLocaleString('en-US')} migratable · ${p.refused.toLocaleString('en-US')} refused · heap ${mb(m.heapUsed)} MB (${mb(kept)} MB retained) · rss ${mb(m.rss)} MB`,
        );
      },
    });
    gc();
    const end = process.memoryUsage();
    const rate = report.total / (report.ms / 1000);
    const memory = {
      heapUsedMB: { start: mb(start.heapUsed), peak: mb(peak.heapUsed), end: mb(end.heapUsed) },
      /** Heap after a full collection every 50 pages: flat when the run keeps nothing per instance. */
      retainedMB: { start: mb(start.heapUsed), peak: mb(peak.retained), end: mb(end.heapUsed) },
      rssMB: { start: mb(start.rss), peak: mb(peak.rss), end: mb(end.rss) },
    };
    log(`${Math.round(rate).toLocaleString('en-US')} instances/s; memory ${JSON.stringify(memory)}`);
    if (report.total !== N) throw new Error(`dry run read ${report.total} of ${N} instances`);
    const readAfter = await readRate(store);
    log(`read alone: ${Math.round(readAfter).toLocaleString('en-US')} instances/s`);
    const read = Math.max(readBefore, readAfter);
    return [
      rateRow('dry-run-postgres', rate, read, 'instances/s', null, {
        note: `dryRunMigration vs store.list paging alone (the faster of a read before and after) over ${N.toLocaleString('en-US')} stored PostgreSQL instances, pages of ${PAGE}; heap retained ${memory.retainedMB.start} → peak ${memory.retainedMB.peak} → ${memory.retainedMB.end} MB; heapUsed ${memory.heapUsedMB.start} → peak ${memory.heapUsedMB.peak} → ${memory.heapUsedMB.end} MB, rss ${memory.rssMB.start} → peak ${memory.rssMB.peak} → ${memory.rssMB.end} MB`,
        details: {
          n: N,
          pageSize: PAGE,
          readAlone: { before: Math.round(readBefore), after: Math.round(readAfter) },
          seconds: Math.round(report.ms / 100) / 10,
          memory,
          outcomes: report.outcomes,
          reasons: report.reasons.map((r) => ({ reason: r.reason, count: r.count })),
          largest: report.largest,
        },
      }),
    ];
  } finally {
    await pool.end();
  }
}

/** `pnpm bench dry-run-postgres`: the migration dry run's rate and memory over a large fleet. */
export const dryRunPostgres: Group = { name: 'dry-run-postgres', run };
