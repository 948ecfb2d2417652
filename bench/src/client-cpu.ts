// The client's share of an e2e-postgres write without the database: the fleet's workload (runner,
// createWorker and the PostgreSQL adapter, 4 workflows in flight) or the -limit row's raw loop (the
// same statements by hand, each snapshot serialized per write) over a pool that answers every
// statement on the next turn of the event loop. CPU time, bytes allocated and bytes promoted by
// young collections per write do not depend on the machine's load the way writes/s do.
// `limited` and `unlimited` run on a runner with `flowControl`, as flow-concurrency-postgres-every-task's fleet
// does: the workflow with every task under a per-key limit, or the plain one (the row's two sides).
// Usage: node bench/dist/client-cpu.js [ours|raw|limited|unlimited] [rounds] [workflows per round]
// Compare two builds by running each in its own process (a heap shared by two builds mixes their
// collections).

import { GCProfiler } from 'node:v8';
import { createRunner, createWorker, flowControl } from '@stepfold/engine';
import { createPostgresStore } from '@stepfold/store-postgres';
import type pg from 'pg';
import { median } from './measure.js';
import { FLOW_KEYS, LINEAR_STEPS, linear10, linear10Flow, linearChain, noop } from './workflows.js';

const [which = 'ours', roundsArg = '12', perRoundArg = '600'] = process.argv.slice(2);
const ROUNDS = Number(roundsArg);
const PER_ROUND = Number(perRoundArg);
const IN_FLIGHT = 4;
const WRITES = LINEAR_STEPS.length + 1;

type Answer = { rows: unknown[]; rowCount: number };

/** What PostgreSQL would answer: one row written by a create or a save, nothing found by anything else. */
function answerOf(text: string): Answer {
  if (text.startsWith('INSERT INTO') || text.startsWith('UPDATE ')) return { rows: [], rowCount: 1 };
  if (text.startsWith('WITH w AS (')) return { rows: [{ pg_notify: '' }], rowCount: 1 };
  // A flow save or take in its short statement (flow-fast.ts): done there, the row written.
  if (text.startsWith('WITH c AS (')) return { rows: [{ written: true, fast: true }], rowCount: 1 };
  return { rows: [], rowCount: 0 };
}

/** A pool whose statements answer on the next turn (as a socket's data would), and whose connections listen to nothing. */
function fakePool(): pg.Pool {
  const query = (q: string | { text: string }) =>
    new Promise<Answer>((resolve) => {
      const a = answerOf(typeof q === 'string' ? q : q.text);
      setImmediate(() => resolve(a));
    });
  const client = { query, on() {}, removeListener() {}, release() {} };
  return { query, connect: async () => client } as unknown as pg.Pool;
}

const pool = fakePool();
const store = createPostgresStore({ pool, table: 'e2e_workers' });
const flow = which === 'limited' || which === 'unlimited';
const runner = createRunner({
  store,
  workflows: flow ? [linear10, linear10Flow] : [linear10],
  handlers: { noop },
  ...(flow ? { kinds: [flowControl] } : {}),
});
const workflow = which === 'limited' ? 'bench-linear-flow' : 'bench-linear';
const worker = createWorker({ runner, concurrency: IN_FLIGHT });
await worker.start();
let seq = 0;

/** Keeps IN_FLIGHT workflows in flight until `count` have completed, as a fleet worker's `run` does. */
async function ours(count: number): Promise<void> {
  let left = count;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (left-- > 0) {
        const s = await runner.start(workflow, `cpu-${seq++}`, { orderId: seq, key: `k-${seq % FLOW_KEYS}` });
        if (s.status !== 'completed') throw new Error(`${s.id} ended ${s.status}`);
      }
    }),
  );
}

/** The eleven snapshots of one workflow, made once (as the raw loop's are). */
const snapshots = linearChain('raw');

/** The raw loop of `count` workflows: per write one statement with the snapshot serialized, from IN_FLIGHT clients. */
async function raw(count: number): Promise<void> {
  let left = count;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (left-- > 0) {
        const id = `raw-${seq++}`;
        for (const s of snapshots) {
          const first = s.version === 1;
          const r = await pool.query({
            name: first ? 'bench_raw_create' : 'bench_raw_save',
            text: first ? 'INSERT INTO raw' : 'UPDATE raw',
            values: [
              id,
              s.version,
              s.status,
              s.workflow.name,
              null,
              'definition',
              '',
              null,
              null,
              JSON.stringify({ ...s, id }),
            ],
          });
          if (r.rowCount !== 1) throw new Error('raw write not counted');
        }
      }
    }),
  );
}

const run = which === 'raw' ? raw : ours;
for (let w = 0; w < 3; w++) await run(1000); // optimized before it is measured
const cpu: number[] = [];
const allocated: number[] = [];
const promoted: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const gc = new GCProfiler();
  gc.start();
  const used0 = process.memoryUsage().heapUsed;
  const c0 = process.cpuUsage();
  await run(PER_ROUND);
  const c = process.cpuUsage(c0);
  const used1 = process.memoryUsage().heapUsed;
  const { statistics } = gc.stop();
  // Allocated: the heap's growth between collections. Promoted: the old space's growth in young ones.
  let bytes = 0;
  let prev = used0;
  let up = 0;
  for (const g of statistics) {
    bytes += g.beforeGC.heapStatistics.usedHeapSize - prev;
    prev = g.afterGC.heapStatistics.usedHeapSize;
    if (g.gcType !== 'Scavenge') continue;
    const old = (x: typeof g.beforeGC) =>
      x.heapSpaceStatistics.find((s) => s.spaceName === 'old_space')!.spaceUsedSize;
    up += old(g.afterGC) - old(g.beforeGC);
  }
  bytes += used1 - prev;
  const writes = PER_ROUND * WRITES;
  cpu.push((c.user + c.system) / writes);
  allocated.push(bytes / writes);
  promoted.push(up / writes);
}
await worker.stop({ graceMs: 100 });
console.log(
  `${which}: ${median(cpu).toFixed(2)} µs CPU, ${(median(allocated) / 1024).toFixed(2)} KB allocated, ${median(promoted).toFixed(0)} B promoted per write (median of ${ROUNDS} rounds of ${PER_ROUND} workflows, ${WRITES} writes each)`,
);
