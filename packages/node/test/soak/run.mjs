// @ts-check
// `pnpm soak`: mixed workflows (retries, compensation, parallel branches) on every store with 2 s handler deadlines and the stores' default claim
// leases. Per store it runs the workflows twice: the faulted run, with worker processes SIGKILLed
// every few seconds, the store's server stopped and started once mid-run (except on DynamoDB
// (moto), which keeps nothing across a restart) and network faults (below); then again with no
// kill, no restart and no fault, the clean baseline. With --compare-loop a third run puts a plain
// runner.processDue loop in the worker processes, with kills, as the bar the worker is held to. Each
// run has a time budget and ends with a "not final" report rather than hangs. Prints progress, a
// summary line per run (latency p50/p99/max from start to final state, drain, faults injected,
// give-backs, conflicts), then a table per store; exits 1 on any violation, or when the faulted
// run's drain exceeds --drain-ratio (2) times the baseline's.
//
// Network faults: every client of a run (the driver and the worker processes) connects to the store
// through a TCP fault proxy of our own (fault-proxy.mjs) in front of its server, in both runs, so
// they pay the same extra hop. In the faulted run it plays SOAK_FAULTS (fault-schedule.mjs) in a
// loop until the run ends: latency phases (20 ± 10 and 100 ± 50 ms per chunk), reset bursts (every
// live connection reset, then 30% of new ones for 3 s), and two blackholes (3 s then released, 4 s
// then reset): the store clients must recover with the options stores.mjs gives them.
// Drain: from the first start to the last final state (metrics.mjs), the time the fleet takes to
// get the whole workload through; the summary also prints its tail (from the last start). The tail
// is not what is compared: a kill strands the instances the killed process had claimed until their
// claim lapses (30 s by default), so the faulted run's tail is about the claim lease, whatever the
// network did.
//
// Then, per store, a run of tree workflows (a child step, a map of child workflows, a task:
// workflows.mjs) with the same kills (no network faults), in which the worker processes also SIGKILL
// themselves, one child in --crash-every, right after a parent's write that dispatched a child and
// before the child's create (window "dispatch"), and right after a child's terminal write and before
// its parent hears of it (window "ended"); the child and map steps' 1 s deadlines bring both back.
// Every child is checked afterwards (exists once, under its parent, ended as designed, its end
// applied once). A run of its own, so the self-kills do not weigh on the mixed workflows' latency figures.
//
//   node packages/node/test/soak/run.mjs [--stores postgres,redis,mongo,dynamo] [--instances <n>]
//     [--trees <n>] [--crash-every 5] [--workload both|mixed|trees|flow|agent] [--mode worker|loop] [--kills both|on|off] [--compare-loop]
//     [--budget-s <per run>] [--no-restart] [--processes 3] [--claim-ms <ms>] [--timeout-ms 2000]
//     [--rate <starts/s>] [--in-flight <n>] [--loop-limit 10] [--faults on|off] [--drain-ratio 2]
//
// --workload flow runs the flow-controlled workload instead (flow-workload.mjs): orders under a
// concurrency limit per customer and a rate limit per tenant, with the kills (no restart, no network
// faults, on the shared servers), checked never to exceed either limit.
// --workload agent runs agent conversations instead (agent-workload.mjs, agent-driver.mjs): an
// agent of @stepfold/ai with a scripted model and two tools (one not idempotent, in a ledger), with
// the kills and two crash windows (mid-stream, right after a tool call's result is stored), checked
// to answer every message with the whole text streamed, each settled tool call run once, exact
// token totals. --instances there defaults to 200 conversations, --budget-s to 600.
// --instances defaults to 10,000; --trees to 100, each with five children; --crash-every 0 turns
// the crash windows off (the tree run then has only the outside kills); --kills off runs the trees
// without kills or windows; --faults off runs the faulted run without network faults (kills and restart
// only) and skips the drain check; --claim-ms unset leaves each store's default;
// --rate and --in-flight default to the per-store PACE below; --loop-limit is the loop mode's
// processDue limit: about a worker's concurrency, since a killed loop process strands, claimed for
// the store's claimMs, what its last call had not ticked yet (at 100, PostgreSQL's loop p99 under
// kills was 31-65 s, at 10 it was 3.7 s).
//
// Servers: PostgreSQL, Redis and FerretDB run on servers of the soak's own, since the restart
// stops them (stores.mjs ownServer: made by services.sh on a port the OS picks, or the one
// STEPFOLD_SOAK_PG_PORT, STEPFOLD_SOAK_REDIS_PORT or STEPFOLD_SOAK_MONGO_PORT fixes); when the soak
// ends, also on an error, SIGINT or SIGTERM (teardown.mjs), they are dropped with their data, or
// only stopped on a fixed port (a failed run's kept tables stay there). The flow and agent
// workloads run on the shared servers; DynamoDB (moto) is STEPFOLD_DYNAMO_ENDPOINT. At the default paces a store's two runs take at
// least 2 × 10,000 / 40 s on PostgreSQL and Redis, 2 × 1,000 / 4 s on FerretDB and 2 × 10,000 / 12 s
// on DynamoDB (moto), plus the tree runs. Measured on the two-core machine: PostgreSQL 341 s
// faulted, 251 s clean; Redis 399 s faulted, 268 s clean (shared with other test runs); FerretDB
// 2.4/s falling to 0.5/s as its collection grew past 500 instances; DynamoDB (moto) about 4/s
// whatever its table's size (moto-server.py answers a Query by key), so it and FerretDB run alone
// (--stores) with time to spare. The budgets below end a run that falls behind with a "not final" report.
// STEPFOLD_SOAK_PG_GROUP_COMMIT=1 in the environment turns on the PostgreSQL store's groupCommit.
import { parseArgs } from 'node:util';
import { runAgentSoak } from './agent-driver.mjs';
import { runSoak } from './driver.mjs';
import { SOAK_FAULTS } from './fault-schedule.mjs';
import { secs } from './metrics.mjs';
import { KINDS, RESTARTABLE } from './stores.mjs';
import { tearDownOnExit } from './teardown.mjs';

/** @typedef {import('./stores.mjs').StoreKind} StoreKind */

// Workflows per run: 10x the soak's first sizes, on every store. FerretDB's SQLite backend as
// released scanned the collection for every query but one by _id, and a 2,000 run fell from 2.4 to
// 0.5 instances/s as its collection grew; our build's patch (scripts/ferretdb/_patch/) makes the
// store's queries index searches, and 10,000 pass there (about 8 instances/s faulted). Moto, as
// released, answered a Query by sorting every item of the table, and a 10,000 run slowed to a
// crawl; our launcher (scripts/services/moto-server.py) reads the queried partition only, as
// DynamoDB does.
/** @type {Record<StoreKind, number>} */
const INSTANCES = { postgres: 10_000, redis: 10_000, mongo: 10_000, dynamo: 10_000 };

// Tree workflows in the tree run: six instances each (the parent, five children).
/** @type {Record<StoreKind, number>} */
const TREES = { postgres: 100, redis: 100, mongo: 100, dynamo: 100 };

// Seconds one run may take before it stops and reports what is not final: the pace's time for the
// run's instances and some margin. DynamoDB (moto: Python, one request at a time behind its lock,
// about 4 instances/s here) and FerretDB (one command at a time, each a SQLite transaction) are
// several times slower than PostgreSQL and Redis on a two-core machine.
/** @type {Record<StoreKind, number>} */
const BUDGET_S = { postgres: 900, redis: 900, mongo: 3000, dynamo: 3600 };

// Pace of the starts and the most instances in flight before the starts wait. Latency is measured
// from each start, so a backlog larger than the fleet clears in a few seconds would measure the
// queue instead of the workers: FerretDB and moto get a pace and a backlog they keep up with.
/** @type {Record<StoreKind, { perSecond: number, inFlight: number }>} */
const PACE = {
  postgres: { perSecond: 40, inFlight: 200 },
  redis: { perSecond: 40, inFlight: 200 },
  mongo: { perSecond: 12, inFlight: 60 },
  // A faster pace would measure DynamoDB's (moto's) queue, not the workers.
  dynamo: { perSecond: 12, inFlight: 60 },
};

// Milliseconds between SIGKILLs (chosen at random in the range). DynamoDB gets a kill every 5-10 s
// instead of every 1-3 s: a worker process loading the AWS SDK takes about a second of CPU, so a kill every
// 1-3 s on two cores spent most of the machine on restarts (3 instances/s against moto's 12).
/** @type {Record<StoreKind, [number, number]>} */
const KILL_EVERY_MS = {
  postgres: [1000, 3000],
  redis: [1000, 3000],
  mongo: [1000, 3000],
  dynamo: [5000, 10000],
};

// The AWS SDK warns once per process on Node 20 about its future Node 22 floor: noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// Every way out of the soak stops its worker processes and takes its own servers down.
const exit = tearDownOnExit();

const { values } = parseArgs({
  options: {
    stores: { type: 'string', default: KINDS.join(',') },
    instances: { type: 'string' },
    trees: { type: 'string' },
    'crash-every': { type: 'string', default: '5' },
    workload: { type: 'string', default: 'both' },
    mode: { type: 'string', default: 'worker' },
    kills: { type: 'string', default: 'both' },
    'compare-loop': { type: 'boolean', default: false },
    'budget-s': { type: 'string' },
    processes: { type: 'string', default: '3' },
    'no-restart': { type: 'boolean', default: false },
    'claim-ms': { type: 'string' },
    'timeout-ms': { type: 'string', default: '2000' },
    rate: { type: 'string' },
    'in-flight': { type: 'string' },
    'loop-limit': { type: 'string', default: '10' },
    faults: { type: 'string', default: 'on' },
    'drain-ratio': { type: 'string', default: '2' },
  },
});
const kinds = values.stores.split(',').map((k) => {
  const kind = KINDS.find((x) => x === k.trim());
  if (!kind) throw new Error(`unknown store "${k}" (expected ${KINDS.join(', ')})`);
  return kind;
});
const mode = values.mode;
if (mode !== 'worker' && mode !== 'loop') throw new Error(`--mode must be worker or loop, got ${mode}`);
if (!['both', 'on', 'off'].includes(values.kills)) throw new Error('--kills must be both, on or off');
if (!['on', 'off'].includes(values.faults)) throw new Error('--faults must be on or off');
const faultsOn = values.faults === 'on';
const maxDrainRatio = Number(values['drain-ratio']);
const workload = values.workload;
if (!['both', 'mixed', 'trees', 'flow', 'agent'].includes(workload))
  throw new Error('--workload must be both, mixed, trees, flow or agent');
if (workload === 'agent') {
  // Its own run per store (agent-driver.mjs): conversations, kills and crash windows, its oracles.
  let bad = false;
  const lines = [];
  for (const kind of kinds) {
    const instances = Number(values.instances ?? 200);
    console.log(
      `[${kind}] agent conversations: ${instances}, kills every ${KILL_EVERY_MS[kind][0] / 1000}-${KILL_EVERY_MS[kind][1] / 1000} s, crash windows 1 in ${values['crash-every']}`,
    );
    const r = await runAgentSoak({
      kind,
      instances,
      kills: values.kills !== 'off',
      crashEvery: Number(values['crash-every']),
      budgetMs: Number(values['budget-s'] ?? 600) * 1000,
      killEveryMs: KILL_EVERY_MS[kind],
      processes: Number(values.processes),
      ...(values.rate ? { startsPerSecond: Number(values.rate) } : {}),
      ...(values['in-flight'] ? { maxInFlight: Number(values['in-flight']) } : {}),
      ...(values['claim-ms'] ? { claimMs: Number(values['claim-ms']) } : {}),
      progress: (line) => console.log(line),
    });
    for (const v of r.violations.slice(0, 50)) console.log(`[${kind}] VIOLATION ${v}`);
    console.log(r.summary);
    lines.push(r.summary);
    bad ||= !r.ok;
  }
  console.log('\nsoak summary:');
  for (const l of lines) console.log(l);
  await exit(bad ? 1 : 0);
}

/**
 * @typedef {{ mode: 'worker' | 'loop', kills: boolean, trees: boolean, flow?: boolean }} Plan
 * @typedef {Plan & { result?: Awaited<ReturnType<typeof runSoak>> }} Done
 */
/** @type {Plan[]} */
const plans = [];
if (workload === 'flow') {
  if (values.kills !== 'off') plans.push({ mode, kills: true, trees: false, flow: true });
  if (values.kills !== 'on') plans.push({ mode, kills: false, trees: false, flow: true });
} else if (workload !== 'trees') {
  if (values.kills !== 'off') plans.push({ mode, kills: true, trees: false });
  if (values.kills !== 'on') plans.push({ mode, kills: false, trees: false });
  if (values['compare-loop'] && mode !== 'loop') plans.push({ mode: 'loop', kills: true, trees: false });
}
if (workload !== 'mixed' && workload !== 'flow')
  plans.push({ mode, kills: values.kills !== 'off', trees: true });

/** @type {string[]} */
const summaries = [];
/** @type {Map<StoreKind, Done[]>} */
const byStore = new Map();
let failed = false;
for (const kind of kinds) {
  const crashEvery = Number(values['crash-every']);
  /** @type {Done[]} */
  const done = [];
  byStore.set(kind, done);
  for (const plan of plans) {
    const instances = plan.trees ? 0 : Number(values.instances ?? INSTANCES[kind]);
    const trees = plan.trees ? Number(values.trees ?? TREES[kind]) : 0;
    // The baseline runs clean: no kill and no server restart.
    const restart = plan.kills && !plan.flow && !values['no-restart'] && RESTARTABLE[kind] !== undefined;
    // The network faults go with the kills and the restart, in the run the baseline is compared with.
    const faults = faultsOn && plan.kills && !plan.trees && !plan.flow && plan.mode === mode;
    const [kMin, kMax] = KILL_EVERY_MS[kind];
    const what = plan.kills ? `kills every ${kMin / 1000}-${kMax / 1000} s` : 'no kills';
    const windows = plan.kills && crashEvery > 0 && trees > 0 ? `, crash windows 1 in ${crashEvery}` : '';
    const work = plan.trees
      ? `${trees} trees (${trees * 6} instances)`
      : `${instances} ${plan.flow ? 'flow-limited orders' : 'workflows'}`;
    console.log(
      `[${kind}] ${plan.mode} mode, ${work}, ${what}${windows}${restart ? ', one server restart' : ''}${faults ? ', network faults' : ''}`,
    );
    try {
      const r = await runSoak({
        kind,
        instances,
        trees,
        crashEvery,
        mode: plan.mode,
        kills: plan.kills,
        budgetMs: Number(values['budget-s'] ?? BUDGET_S[kind]) * 1000,
        killEveryMs: KILL_EVERY_MS[kind],
        processes: Number(values.processes),
        startsPerSecond: Number(values.rate ?? PACE[kind].perSecond),
        maxInFlight: Number(values['in-flight'] ?? PACE[kind].inFlight),
        restart,
        // Every run of a store with a server of the soak's own runs on it: the same server for the
        // faulted run and its baseline. The flow workload restarts nothing: the shared servers.
        ownServer: RESTARTABLE[kind] !== undefined && !plan.flow,
        // Both through the fault proxy: the baseline pays the same hop as the faulted run.
        proxy: !plan.flow,
        flow: plan.flow ?? false,
        ...(faults ? { faults: SOAK_FAULTS, repeatFaults: true, maxBlackholes: 2 } : {}),
        ...(values['claim-ms'] ? { claimMs: Number(values['claim-ms']) } : {}),
        timeoutMs: Number(values['timeout-ms']),
        loopLimit: Number(values['loop-limit']),
        progress: (line) => console.log(line),
      });
      for (const v of r.violations.slice(0, 50)) console.log(`[${kind}] VIOLATION ${v}`);
      if (r.violations.length > 50) console.log(`[${kind}] … ${r.violations.length - 50} more violations`);
      for (const c of r.crashes) console.log(`[${kind}] unplanned exit: ${c}`);
      console.log(r.summary);
      summaries.push(r.summary);
      done.push({ ...plan, result: r });
      failed ||= !r.ok;
    } catch (e) {
      console.error(`[${kind}] the soak run failed:`, e);
      summaries.push(`store=${kind} mode=${plan.mode} error=${e instanceof Error ? e.message : String(e)}`);
      done.push(plan);
      failed = true;
    }
  }
  // The faulted run must drain within maxDrainRatio × the fault-free run's drain.
  const ratio = drainRatio(done);
  if (faultsOn && ratio !== null) {
    const verdict = ratio.value <= maxDrainRatio ? 'ok' : `OVER ${maxDrainRatio}×`;
    const line = `store=${kind} drain faulted=${ratio.faulted} clean=${ratio.clean} ratio=${ratio.value.toFixed(2)} (${verdict})`;
    console.log(line);
    summaries.push(line);
    failed ||= !(ratio.value <= maxDrainRatio);
  }
}

/**
 * Drain of the faulted run (worker mode, kills, restart, faults) over the clean baseline's.
 * @param {Done[]} done
 */
function drainRatio(done) {
  const get = (/** @type {boolean} */ kills) =>
    done.find((d) => d.mode === mode && d.kills === kills && !d.trees && !d.flow)?.result?.drain;
  const f = get(true);
  const c = get(false);
  if (!f || !c) return null;
  const text = (/** @type {import('./metrics.mjs').Drain} */ d) => `${d.notFinal ? '≥' : ''}${secs(d.ms)}s`;
  return { faulted: text(f), clean: text(c), value: f.ms / c.ms };
}

console.log('\nsoak summary:');
for (const s of summaries) console.log(s);

// p99 instance latency per store, in seconds; "≥" where instances were still not final at the
// budget (their latency is counted up to then, a lower bound).
/** @param {Done[]} done @param {'worker' | 'loop'} m @param {boolean} k @param {boolean} [trees] */
const p99 = (done, m, k, trees = false) => {
  const r = done.find((d) => d.mode === m && d.kills === k && d.trees === trees)?.result;
  if (!r) return { text: '-', ms: Number.NaN };
  return { text: `${r.latency.notFinal ? '≥' : ''}${secs(r.latency.p99)}`, ms: r.latency.p99 };
};
const cols = ['store', `p99 ${mode} kills`, `p99 ${mode} no kills`];
if (values['compare-loop'] && mode !== 'loop') cols.push('p99 loop kills', 'worker/loop');
const treeKills = values.kills !== 'off';
cols.push(`p99 trees${treeKills ? ' kills' : ''}`, 'window kills');
if (faultsOn) cols.push('drain faulted/clean');
console.log(`\n${cols.map((c) => c.padEnd(22)).join('')}`);
for (const [kind, done] of byStore) {
  const row = [kind, p99(done, mode, true).text, p99(done, mode, false).text];
  if (values['compare-loop'] && mode !== 'loop') {
    const w = p99(done, 'worker', true);
    const l = p99(done, 'loop', true);
    const ratio = w.ms / l.ms;
    row.push(l.text, Number.isFinite(ratio) ? `${ratio.toFixed(2)}×${ratio <= 2 ? '' : ' (over 2×)'}` : '-');
  }
  // The tree run's windows hit: dispatch (before a child's create) / ended (before its report).
  const w = done.find((d) => d.trees)?.result?.windows;
  row.push(p99(done, mode, treeKills, true).text, w ? `${w.dispatch} / ${w.ended}` : '-');
  const ratio = drainRatio(done);
  if (faultsOn) row.push(ratio ? `${ratio.faulted} / ${ratio.clean} = ${ratio.value.toFixed(2)}×` : '-');
  console.log(row.map((c) => c.padEnd(22)).join(''));
}
await exit(failed ? 1 : 0);
