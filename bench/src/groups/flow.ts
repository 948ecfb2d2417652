import { createRunner, flowControl, type Runner, type Store } from '@stepfold/engine';
import { createPostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';
import { backends, pgDatabaseUrl } from '../backends.js';
import { type FleetRun, startFleet } from '../fleet/fleet.js';
import { median } from '../measure.js';
import { costRow, type Group, type Row, rateRow } from '../row.js';
import { FLOW_KEY_LIMIT, FLOW_KEYS, FLOW_RATE_LIMIT, fairJob, rateLimited } from '../workflows.js';
import { E2E_PROCESSES, PER_PROCESS } from './e2e.js';

// Flow control's rows (docs/flow-control.md), each from worker processes over PostgreSQL:
// - flow-concurrency-postgres: what a concurrency key costs, the e2e-postgres workload with one
//   per-key limit on the workflow (100 keys × 4) against the same workload without limits, in
//   alternating rounds; beside it -every-task, the same limit on each of the ten tasks instead;
// - flow-rate-accuracy: a rate limit per tenant used to the full and never exceeded;
// - flow-fairness: how many starts a light tenant's first job waits behind a heavy tenant's flood.
// STEPFOLD_FLOW_SCALE (default 1) shrinks the counts and durations, for a quick check that the rows run.

const SCALE = Number(process.env['STEPFOLD_FLOW_SCALE'] ?? 1);
const scaled = (n: number, least: number) => Math.max(least, Math.round(n * SCALE));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `row`, empty, with why it was not measured. */
function unmeasured(row: Row, note: string): Row[] {
  return [{ ...row, note }];
}

/** The PostgreSQL backend's URL of the bench database, or why it cannot be used. */
async function benchDatabase(): Promise<{ url: string } | { down: string }> {
  const b = backends.find((x) => x.name === 'postgres');
  if (!b) return { down: 'not measured: no postgres store adapter in this checkout yet' };
  const down = await b.unavailable();
  if (down) return { down: `not measured: ${down}` };
  return { url: pgDatabaseUrl(b.url, 'stepfold_bench') };
}

/**
 * A runner that only writes (the tasks are the fleet's), on the fleet's table, and how to close it;
 * the grants its writes take go to `onGrant`.
 */
function producer(
  url: string,
  table: string,
  onGrant: (holder: string, at: number) => void = () => {},
): { runner: Runner; close(): Promise<void> } {
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  const inner = createPostgresStore({ pool, table });
  const flow = inner.flow!;
  const store: Store = Object.assign(Object.create(inner) as Store, {
    flow: {
      async acquire(...a: Parameters<typeof flow.acquire>) {
        const g = await flow.acquire(...a);
        if (g.granted) onGrant(a[0], a[3]);
        return g;
      },
      release: (...a: Parameters<typeof flow.release>) => flow.release(...a),
      renew: (...a: Parameters<typeof flow.renew>) => flow.renew(...a),
      list: (...a: Parameters<typeof flow.list>) => flow.list(...a),
    },
  });
  const runner = createRunner({
    store,
    workflows: [rateLimited, fairJob],
    kinds: [flowControl],
    execute: false,
  });
  return {
    runner,
    async close() {
      await inner.close();
      await pool.end();
    },
  };
}

/** The most of `times` in any window [t, t + periodMs). */
function busiestWindow(times: readonly number[], periodMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= periodMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

const CONCURRENCY_ROUNDS = 3;

/**
 * flow-concurrency-postgres: the e2e-postgres fleet runs the 10-step workflow with one concurrency
 * key, `concurrency: { key: 'input.key', limit: 4 }` on the workflow (taken at the create, released
 * at the end) over 100 keys, and the same workflow without limits, in alternating rounds (each
 * round's order the reverse of the last). With 4 workflows in flight no key is ever full: the ratio
 * is the cost of asking the store. Beside it, in the same rounds, `-every-task`: the same limit on each of the
 * ten tasks instead (ten counters per key, each task's write moving a slot from one to the next),
 * informative.
 */
export const flowConcurrencyPostgres: Group = {
  name: 'flow-concurrency-postgres',
  async run(): Promise<Row[]> {
    const empty = rateRow('flow-concurrency-postgres', null, null, 'workflows/s', 0.8);
    const db = await benchDatabase();
    if ('down' in db) return unmeasured(empty, db.down);
    const perRound = scaled(1000, 50);
    const fleet = await startFleet({
      pgUrl: db.url,
      processes: E2E_PROCESSES,
      concurrency: PER_PROCESS,
      table: 'flow_workers',
      flow: true,
    });
    const instance: FleetRun[] = [];
    const plain: FleetRun[] = [];
    const everyTask: FleetRun[] = [];
    try {
      const runEveryTask = (tag: string, n: number) =>
        fleet.run(n, tag, { workflow: 'bench-linear-flow', keys: FLOW_KEYS });
      for (let w = 0; w < 3; w++) {
        await runEveryTask(`flow-warm-${w}-${Date.now().toString(36)}`, scaled(400, 20));
        await fleet.run(scaled(400, 20), `plain-warm-${w}-${Date.now().toString(36)}`);
        await fleet.run(scaled(400, 20), `inst-warm-${w}-${Date.now().toString(36)}`, {
          workflow: 'bench-linear-flow-instance',
          keys: FLOW_KEYS,
        });
      }
      for (let r = 0; r < CONCURRENCY_ROUNDS; r++) {
        const tag = `flowc-${r}-${Date.now().toString(36)}`;
        const order =
          r % 2 === 0
            ? (['every-task', 'plain', 'instance'] as const)
            : (['instance', 'plain', 'every-task'] as const);
        for (const which of order) {
          if (which === 'every-task') everyTask.push(await runEveryTask(`${tag}-l`, perRound));
          else if (which === 'instance')
            instance.push(
              await fleet.run(perRound, `${tag}-i`, {
                workflow: 'bench-linear-flow-instance',
                keys: FLOW_KEYS,
              }),
            );
          else plain.push(await fleet.run(perRound, `${tag}-p`));
        }
        process.stderr.write(`  flow-concurrency-postgres: round ${r + 1}/${CONCURRENCY_ROUNDS} done\n`);
      }
    } finally {
      await fleet.stop();
    }
    const wps = (runs: FleetRun[]) => median(runs.map((x) => x.workflowsPerSec));
    return [
      rateRow('flow-concurrency-postgres', wps(instance), wps(plain), 'workflows/s', 0.8, {
        note: `e2e-postgres's fleet (${E2E_PROCESSES} process${E2E_PROCESSES === 1 ? '' : 'es'} × ${PER_PROCESS} in flight), the workflow under a limit of ${FLOW_KEY_LIMIT} per key over ${FLOW_KEYS} keys (taken at the create, released at the end) vs no limit, ${CONCURRENCY_ROUNDS}×${perRound} workflows each, alternating rounds`,
        details: { instance, plain },
      }),
      rateRow('flow-concurrency-postgres-every-task', wps(everyTask), wps(plain), 'workflows/s', null, {
        note: `the same rounds with the limit (${FLOW_KEY_LIMIT} per key over ${FLOW_KEYS} keys) on each of the ten tasks instead of on the workflow: ten counters per key, each task's write moving a slot from one to the next`,
        details: { everyTask },
      }),
    ];
  },
};

const RATE_TENANTS = ['t-a', 't-b'];
/** Calls fed per tenant per second: a backlog that grows, so the limit is always what holds them. */
const RATE_FEED = Math.round(FLOW_RATE_LIMIT * 1.2);

/**
 * flow-rate-accuracy: two tenants each feed calls at 1.2 × `rateLimit` (50 a second per tenant,
 * a sliding window of 1 s) to the fleet's processes: each tenant's handler starts per second while
 * it had a backlog against the limit, and the busiest second of the starts as the store counted
 * them (each call's grant). Ratio = the lower tenant's throughput / the limit, or 0 when any second
 * held more than the limit or a call never started.
 */
export const flowRateAccuracy: Group = {
  name: 'flow-rate-accuracy',
  async run(): Promise<Row[]> {
    const empty = rateRow('flow-rate-accuracy', null, null, 'starts/s', 0.9);
    const db = await benchDatabase();
    if ('down' in db) return unmeasured(empty, db.down);
    const feedMs = scaled(15_000, 3000);
    const table = 'flow_rate';
    const processes = Math.max(2, E2E_PROCESSES);
    const fleet = await startFleet({
      pgUrl: db.url,
      processes,
      concurrency: 4,
      slots: 16,
      table,
      flow: true,
      grants: true,
    });
    // A rate limit counts a start at its grant; a handler begins a write later. Grants come from
    // the fleet's writes and this process's (a call that may start at once is granted at its start).
    // A holder is the attempt as one write dispatched it (`…#attempt@version`); the handler reports
    // the attempt (`…#attempt`): its first grant is when the store counted its start.
    const grants = new Map<string, number>();
    const grant = (holder: string, at: number) => {
      const attempt = holder.replace(/@\d+$/, '');
      if (!grants.has(attempt)) grants.set(attempt, at);
    };
    fleet.onGranted(grant);
    const p = producer(db.url, table, grant);
    const tag = `rate-${Date.now().toString(36)}`;
    const starts = new Map<string, Array<{ at: number; holder: string }>>(RATE_TENANTS.map((t) => [t, []]));
    fleet.onBegan((at, id, key, holder) => {
      if (id.startsWith(tag)) starts.get(key)?.push({ at, holder });
    });
    let fed = 0;
    try {
      const t0 = Date.now();
      for (let elapsed = 0; elapsed < feedMs; elapsed = Date.now() - t0) {
        const due = Math.floor(((elapsed + 50) * RATE_FEED) / 1000);
        const writes: Array<Promise<unknown>> = [];
        for (; fed < due; fed++)
          for (const tenant of RATE_TENANTS)
            writes.push(p.runner.start('bench-flow-rate', `${tag}-${tenant}-${fed}`, { tenant }));
        await Promise.all(writes);
        await sleep(50);
      }
      // The backlog drains at the limit; every call fed must start.
      const deadline = Date.now() + (fed / FLOW_RATE_LIMIT) * 1000 + 30_000;
      while ([...starts.values()].some((s) => s.length < fed) && Date.now() < deadline) await sleep(200);
    } finally {
      await fleet.stop();
      await p.close();
    }
    const perTenant = RATE_TENANTS.map((tenant) => {
      const runs = starts.get(tenant)!;
      const times = runs.map((r) => r.at);
      const first = Math.min(...times);
      const inFeed = times.filter((t) => t < first + feedMs).length;
      return {
        tenant,
        started: runs.length,
        fed,
        perSec: inFeed / (feedMs / 1000),
        busiest: busiestWindow(
          runs.map((r) => grants.get(r.holder) ?? r.at),
          1000,
        ),
        busiestByHandlerStart: busiestWindow(times, 1000),
        ungranted: runs.filter((r) => !grants.has(r.holder)).length,
      };
    });
    const throughput = Math.min(...perTenant.map((t) => t.perSec));
    const busiest = Math.max(...perTenant.map((t) => t.busiest));
    const dropped = perTenant.some((t) => t.started < fed);
    const row = rateRow('flow-rate-accuracy', throughput, FLOW_RATE_LIMIT, 'starts/s', 0.9, {
      note: `${RATE_TENANTS.length} tenants × ${RATE_FEED} calls/s fed for ${feedMs / 1000} s to ${processes} worker processes × 16 slots, rateLimit ${FLOW_RATE_LIMIT} per 1 s per tenant; ours = the lower tenant's starts/s (handler starts) while backlogged, busiest second ${busiest} by the store's grant times (ratio 0 if above the limit or a call never started)`,
      details: { perTenant, busiest, dropped },
    });
    if (busiest <= FLOW_RATE_LIMIT && !dropped) return [row];
    return [{ ...row, ratio: 0, met: false }];
  },
};

const FAIR_ROUNDS = 3;
const FAIR_SLOTS = 4;

/**
 * flow-fairness: tenant A enqueues a flood of jobs (`fairness: { key: 'input.tenant' }`, 20 ms of
 * work each) while the fleet runs them, then tenant B one job; ours = how many starts B's job came
 * after it was enqueued (itself included), baseline = workers × slots (every slot taken or claimed
 * before it, at worst). Median of 3 floods. Ratio = baseline / ours.
 */
export const flowFairness: Group = {
  name: 'flow-fairness',
  async run(): Promise<Row[]> {
    const processes = Math.max(2, E2E_PROCESSES);
    const bound = processes * FAIR_SLOTS;
    const empty = costRow('flow-fairness', null, bound, 'starts', 1);
    const db = await benchDatabase();
    if ('down' in db) return unmeasured(empty, db.down);
    const flood = scaled(1000, 200);
    const table = 'flow_fair';
    const fleet = await startFleet({
      pgUrl: db.url,
      processes,
      concurrency: FAIR_SLOTS,
      slots: FAIR_SLOTS,
      table,
      flow: true,
    });
    const p = producer(db.url, table);
    const began: Array<{ at: number; id: string }> = [];
    fleet.onBegan((at, id) => void began.push({ at, id }));
    const waits: number[] = [];
    try {
      for (let r = 0; r < FAIR_ROUNDS; r++) {
        const tag = `fair-${r}-${Date.now().toString(36)}`;
        for (let i = 0; i < flood; i += 50)
          await Promise.all(
            Array.from({ length: Math.min(50, flood - i) }, (_, k) =>
              p.runner.start('bench-flow-fair', `${tag}-a-${i + k}`, { tenant: 'a', workMs: 20 }),
            ),
          );
        const asked = Date.now();
        const light = `${tag}-b`;
        await p.runner.start('bench-flow-fair', light, { tenant: 'b', workMs: 20 });
        const deadline = Date.now() + 60_000;
        while (!began.some((b) => b.id === light) && Date.now() < deadline) await sleep(20);
        const after = began.filter((b) => b.at >= asked && b.id.startsWith(tag)).sort((x, y) => x.at - y.at);
        const position = after.findIndex((b) => b.id === light) + 1;
        waits.push(position > 0 ? position : Number.POSITIVE_INFINITY);
        // The rest of the flood drains before the next round.
        while (began.filter((b) => b.id.startsWith(tag)).length < flood + 1 && Date.now() < deadline + 60_000)
          await sleep(100);
        process.stderr.write(`  flow-fairness: round ${r + 1}/${FAIR_ROUNDS}: start ${position}\n`);
      }
    } finally {
      await fleet.stop();
      await p.close();
    }
    return [
      costRow('flow-fairness', median(waits), bound, 'starts', 1, {
        note: `${processes} worker processes × ${FAIR_SLOTS} slots; tenant a enqueues ${flood} jobs of 20 ms while they run, then tenant b one: b's job is the ours-th start after it was enqueued (median of ${FAIR_ROUNDS}); baseline = processes × slots`,
        details: { waits },
      }),
    ];
  },
};

/** Every flow row's group. */
export const flowGroups: Group[] = [flowConcurrencyPostgres, flowRateAccuracy, flowFairness];
