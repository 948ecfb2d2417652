// A bench worker process (forked by fleet.ts): a runner and a `createWorker` over the PostgreSQL
// store, driven by the parent over IPC. `run` keeps `concurrency` linear workflows in flight and
// reports what it wrote; `raw` runs the adapter's save statement by hand from as many clients
// (the physical limit); a `hit` handler reports wake latencies; `queries` counts the polls' queries (listDue, claimDue, the inbox claim).
import { createRunner, type Snapshot, type Store, step } from '@stepfold/engine';
import { createWorker } from '@stepfold/engine/worker';
import { createPostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';
import { wallMs } from '../peers/common.js';
import { LINEAR_STEPS, linear10, noop } from '../workflows.js';
import { signalProbe, timerProbe } from './probes.js';

/** A command from the parent. */
export type ChildCommand =
  | { cmd: 'run'; count: number; tag: string }
  | { cmd: 'raw'; ms: number; snapshot: Snapshot }
  | { cmd: 'rawflow'; ms: number }
  | { cmd: 'queries' }
  | { cmd: 'stop' };

/** A reply to the parent. */
export type ChildReply =
  | { type: 'ready' }
  | { type: 'ran'; workflows: number; writes: number; seconds: number; cpuMs: number }
  | { type: 'raw'; updates: number; seconds: number; cpuMs: number }
  | { type: 'queries'; listDue: number }
  | { type: 'hit'; ms: number; id: string };

const send = (m: ChildReply) => process.send!(m);
const concurrency = Number(process.env['BENCH_CONCURRENCY'] ?? 2);
const pool = new pg.Pool({ connectionString: process.env['BENCH_PG_URL'], max: concurrency + 2 });
const inner = createPostgresStore({
  pool,
  table: process.env['BENCH_TABLE'] ?? 'instances',
  groupCommit: process.env['BENCH_GROUP_COMMIT'] === '1',
});
// Every query a poll makes: listDue, claimDue (each lane, and notices' ids) and the inbox's claim (its lane).
let listDue = 0;
const claims = inner.claims!;
const inbox = inner.inbox!;
const store: Store = Object.assign(Object.create(inner) as Store, {
  listDue(...a: Parameters<Store['listDue']>) {
    listDue++;
    return inner.listDue(...a);
  },
  claims: {
    ...claims,
    claimDue(...a: Parameters<typeof claims.claimDue>) {
      listDue++;
      return claims.claimDue(...a);
    },
  },
  inbox: {
    ...inbox,
    claim(...a: Parameters<typeof inbox.claim>) {
      listDue++;
      return inbox.claim(...a);
    },
  },
});
await inner.setup();

const runner = createRunner({
  store,
  workflows: [linear10, signalProbe, timerProbe],
  handlers: {
    noop,
    hit: ({ input, instanceId }) => {
      send({ type: 'hit', ms: wallMs() - (input as { sentAt: number }).sentAt, id: instanceId });
      return null;
    },
  },
});
const worker = createWorker({ runner, concurrency: Math.max(concurrency, 4) });
await worker.start();

/** The eleven snapshots one linear workflow writes (start, then one per step result). */
function linearChain(): Snapshot[] {
  let s = step(linear10, null, {
    type: 'start',
    at: Date.now(),
    id: 'rawflow-template',
    input: { orderId: 1 },
  });
  const out = [s];
  for (const [k, name] of LINEAR_STEPS.entries()) {
    s = step(linear10, s, {
      type: 'task.completed',
      at: s.createdAt + k + 1,
      step: name,
      attempt: 1,
      output: null,
    });
    out.push(s);
  }
  return out;
}

/** Keeps `concurrency` workflows in flight until `count` have completed. */
async function run(count: number, tag: string): Promise<ChildReply> {
  const before = runner.stats.writes;
  const cpu = process.cpuUsage();
  let left = count;
  let seq = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left > 0) {
        left--;
        const s = await runner.start('bench-linear', `${tag}-${seq++}`, { orderId: seq });
        if (s.status !== 'completed') throw new Error(`${s.id} ended ${s.status}`);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(cpu);
  const cpuMs = (used.user + used.system) / 1000;
  return { type: 'ran', workflows: count, writes: runner.stats.writes - before, seconds, cpuMs };
}

/** The adapter's save statement by hand, from `concurrency` clients, each on its own row. */
async function raw(ms: number, base: Snapshot): Promise<ChildReply> {
  const table = `"stepfold"."${process.env['BENCH_TABLE'] ?? 'instances'}"`;
  const sql = `UPDATE ${table} SET version = $3, status = $4, workflow = $5, wake_at = $6, claimed_until = NULL, snapshot = $7::jsonb, snapshot_text = $8 WHERE id = $1 AND version = $2`;
  const rows = await Promise.all(
    Array.from({ length: concurrency }, async (_, k) => {
      const s: Snapshot = { ...base, id: `${base.id}-${process.pid}-${k}`, version: 1 };
      await inner.delete(s.id);
      await inner.create(s);
      return s;
    }),
  );
  let updates = 0;
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + ms;
  await Promise.all(
    rows.map(async (s0) => {
      let s = s0;
      while (performance.now() < end) {
        const next = { ...s, version: s.version + 1 };
        const r = await pool.query({
          name: 'bench_raw_save',
          text: sql,
          values: [
            next.id,
            s.version,
            next.version,
            next.status,
            next.workflow.name,
            null,
            null, // JSON in snapshot_text, as the adapter writes it by default
            JSON.stringify(next),
          ],
        });
        if (r.rowCount !== 1) throw new Error(`raw update of ${s.id} matched nothing`);
        s = next;
        updates++;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(cpu);
  for (const s of rows) await inner.delete(s.id);
  return { type: 'raw', updates, seconds, cpuMs: (used.user + used.system) / 1000 };
}

/**
 * The same writes a workflow of `run` makes, by hand: per workflow the adapter's INSERT and then
 * its ten conditional UPDATEs, with the snapshots the reducer produces for it (serialized per
 * write, as the store does, into the text column it writes by default) and the wake times the
 * store would index, from `concurrency` clients.
 */
async function rawFlow(ms: number): Promise<ChildReply> {
  const table = `"stepfold"."${process.env['BENCH_TABLE'] ?? 'instances'}"`;
  const insert = `INSERT INTO ${table} (id, version, status, workflow, wake_at, snapshot, snapshot_text) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)`;
  const update = `UPDATE ${table} SET version = $3, status = $4, workflow = $5, wake_at = $6, claimed_until = NULL, snapshot = $7::jsonb, snapshot_text = $8 WHERE id = $1 AND version = $2`;
  const chain = linearChain();
  const t0s = chain[0]!.createdAt;
  const prefix = `rawflow-${process.pid}-${Date.now().toString(36)}`;
  let updates = 0;
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + ms;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, k) => {
      for (let n = 0; performance.now() < end; n++) {
        const id = `${prefix}-${k}-${n}`;
        const now = Date.now();
        for (const s of chain) {
          const wake = s.wakeAt === null ? null : Math.ceil((s.wakeAt - t0s + now) / 1000) * 1000;
          const json = JSON.stringify({ ...s, id });
          const r =
            s.version === 1
              ? await pool.query({
                  name: 'bench_raw_create',
                  text: insert,
                  values: [id, 1, s.status, s.workflow.name, wake, null, json],
                })
              : await pool.query({
                  name: 'bench_raw_save',
                  text: update,
                  values: [id, s.version - 1, s.version, s.status, s.workflow.name, wake, null, json],
                });
          if (r.rowCount !== 1) throw new Error(`raw write of ${id} matched nothing`);
          updates++;
        }
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(cpu);
  await pool.query(`DELETE FROM ${table} WHERE id LIKE $1`, [`${prefix}-%`]);
  return { type: 'raw', updates, seconds, cpuMs: (used.user + used.system) / 1000 };
}

process.on('message', (m: ChildCommand) => {
  const reply = (p: Promise<ChildReply>) =>
    p.then(send, (e) => {
      console.error(e);
      process.exit(1);
    });
  if (m.cmd === 'run') reply(run(m.count, m.tag));
  else if (m.cmd === 'raw') reply(raw(m.ms, m.snapshot));
  else if (m.cmd === 'rawflow') reply(rawFlow(m.ms));
  else if (m.cmd === 'queries') reply(Promise.resolve({ type: 'queries', listDue }));
  else if (m.cmd === 'stop') {
    void worker
      .stop({ graceMs: 5_000 })
      .then(() => pool.end())
      .then(() => process.exit(0));
  }
});
send({ type: 'ready' });
