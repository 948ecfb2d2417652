import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { type FlowNeed, type SaveFlow, type Snapshot, snapshotOfSize } from '@stepfold/engine';
import type { createPostgresStore as CreateStore, PostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';
import { median } from './measure.js';

// What a flow "move" (a task's end releasing its hold on step N's concurrency counter and taking
// one on step N+1's, in the save's statement) costs the PostgreSQL backend, beside a plain save of
// the same rows: one connection, its backend's CPU read from /proc/<pid>/schedstat (the server
// must run on this machine), rounds of each kind interleaved. Every instance has a key of its own,
// so, as in the flow-concurrency-postgres fleet, a move empties the counter it leaves and finds
// none where it goes. Other builds of the store (their dist/index.js) are measured in the same
// rounds, each on a table of its own.
// Usage: node bench/dist/move-cpu.js <postgres url> [rounds] [instances] [store module...]
// (MOVE_CPU_KINDS=move: moves only, e.g. while `perf record -p <backend pid>` profiles them.)

const [url, roundsArg = '7', instancesArg = '100', ...others] = process.argv.slice(2);
if (!url) throw new Error('usage: move-cpu <postgres url> [rounds] [instances] [store module...]');
const ROUNDS = Number(roundsArg);
const INSTANCES = Number(instancesArg);
const STEPS = 10;
const SNAPSHOT_BYTES = 1500;
const KINDS = (process.env['MOVE_CPU_KINDS'] ?? 'move,plain').split(',') as Array<'move' | 'plain'>;

// A schema of its own, dropped before and after.
const SCHEMA = 'stepfold_move_cpu';

const admin = new pg.Client({ connectionString: url });
await admin.connect();
await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
/** The CPU backend `pid` has used so far, in microseconds (schedstat's first field: ns on a CPU). */
const cpu = (pid: number) => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1000;

const modules = ['@stepfold/store-postgres', ...others.map((p) => pathToFileURL(p).href)];
// Each build on a pool of one connection of its own (their prepared statements' names would clash).
const stores: Array<{ label: string; pool: pg.Pool; pid: number; store: PostgresStore; versions: number[] }> =
  [];
for (const [i, m] of modules.entries()) {
  const { createPostgresStore } = (await import(m)) as { createPostgresStore: typeof CreateStore };
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const pid = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  console.log(`${i === 0 ? 'this build' : others[i - 1]}: backend ${pid}`);
  const store = createPostgresStore({ pool, schema: SCHEMA, table: `move_cpu_${i}` });
  await store.setup();
  for (let j = 0; j < INSTANCES; j++) await store.create(snapshotOfSize(`i${j}`, SNAPSHOT_BYTES));
  stores.push({
    label: i === 0 ? 'this build' : others[i - 1]!,
    pool,
    pid,
    store,
    versions: Array(INSTANCES).fill(1),
  });
}

const need = (step: number, j: number): FlowNeed => ({ scope: `move/s${step}`, key: `k${j}`, limit: 4 });
const holder = (j: number, step: number, round: number) => `i${j}#r${round}s${step}`;
const snapshot = (j: number, version: number): Snapshot => ({
  ...snapshotOfSize(`i${j}`, SNAPSHOT_BYTES),
  version,
});

/** One round of `kind` on `s`: (STEPS - 1) saves of each instance; the backend's µs per save. */
async function round(s: (typeof stores)[number], kind: 'move' | 'plain', r: number): Promise<number> {
  const { store, versions, pid } = s;
  const flow = store.flow!;
  const now = Date.now();
  if (kind === 'move')
    for (let j = 0; j < INSTANCES; j++) {
      const g = await flow.acquire(holder(j, 0, r), `i${j}`, [need(0, j)], now, now + 60_000);
      if (!g.granted) throw new Error('acquire refused');
    }
  const t0 = cpu(pid);
  for (let step = 0; step < STEPS - 1; step++)
    for (let j = 0; j < INSTANCES; j++) {
      const v = versions[j]!;
      const moving: SaveFlow = {
        release: [holder(j, step, r)],
        counters: [{ scope: need(step, j).scope, key: `k${j}`, period: 0 }],
        take: { holder: holder(j, step + 1, r), needs: [need(step + 1, j)], until: now + 60_000 },
        now,
      };
      await store.save(snapshot(j, v + 1), v, kind === 'move' ? { flow: moving } : undefined);
      versions[j] = v + 1;
    }
  const spent = cpu(pid) - t0;
  if (kind === 'move') {
    const last = STEPS - 1;
    for (let j = 0; j < INSTANCES; j++)
      await flow.release([holder(j, last, r)], now, [
        { scope: need(last, j).scope, key: `k${j}`, period: 0 },
      ]);
  }
  return spent / ((STEPS - 1) * INSTANCES);
}

const figures = new Map<string, number[]>();
// A first round of each warms the plans (the prepared statements' generic plans) and is not counted.
for (let r = 0; r <= ROUNDS; r++)
  for (const s of stores)
    for (const kind of KINDS) {
      const us = await round(s, kind, r);
      if (r === 0) continue;
      const k = `${s.label} ${kind}`;
      figures.set(k, [...(figures.get(k) ?? []), us]);
    }
console.log(`backend µs per save (median of ${ROUNDS} rounds of ${(STEPS - 1) * INSTANCES}; all rounds):`);
for (const [k, v] of figures)
  console.log(`  ${k}: ${median(v).toFixed(1)}  [${v.map((x) => x.toFixed(0)).join(' ')}]`);
for (const s of stores) {
  await s.store.close();
  await s.pool.end();
}
await admin.query(`DROP SCHEMA ${SCHEMA} CASCADE`);
await admin.end();
