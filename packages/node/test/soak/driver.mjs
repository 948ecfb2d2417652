// @ts-check
// The soak on one store: worker processes (runWorkers) are SIGKILLed in a loop (unless kills are
// off), and optionally the store's server is stopped and started, while `instances` workflows with
// retries, compensation and parallel branches run; then every final snapshot and the oracle log are
// checked, and each instance's latency from start to final state is measured. Used by the vitest
// soak test (a short run) and by `pnpm soak` (run.mjs).
//
// With `trees`, that many tree workflows (a child step, a map of child workflows, then a task: see
// workflows.mjs) run among them, and with `crashEvery` (kills on) the worker processes also kill
// themselves inside the two crash windows of child workflows (crash-windows.mjs); afterwards every
// child is checked too: each designed child exists once, under its parent, ended as designed, and
// no step or map item completed (no child's end applied) twice.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRunner, defineHooks } from '@stepfold/engine';
import { startFaultProxy } from './fault-proxy.mjs';
import { playFaults } from './fault-schedule.mjs';
import { inBatches, killWorkers, retrying, servingPid, startFleet } from './fleet.mjs';
import { checkFlow, flowDesign, flowHandlers, flowWorkflows, withGrantLog } from './flow-workload.mjs';
import { drain, fleetStats, giveBacks, latency, races, rate, secs as s1 } from './metrics.mjs';
import { LogTail, openOracleLog } from './oracle-log.mjs';
import { checkChildren, checkLog, checkSnapshots, describeTask, listIds } from './oracles.mjs';
import { openStore, ownServer, storeUrl } from './stores.mjs';
import { design, KINDS, soakHandlers, soakWorkflows, TIMEOUT_MS, treeDesign } from './workflows.mjs';

/**
 * @typedef {import('@stepfold/engine').Snapshot} Snapshot
 * @typedef {object} SoakOptions
 * @property {import('./stores.mjs').StoreKind} kind
 * @property {number} instances mixed workflows (retries, compensation, parallel branches), or with
 *   `flow` the flow workload's orders (flow-workload.mjs: limits per customer and per tenant)
 * @property {boolean} [flow] the instances are the flow workload's (default false)
 * @property {number} [trees] tree workflows besides them (default 0)
 * @property {number} [crashEvery] with kills on, worker processes also SIGKILL themselves in a child
 *   workflow's crash window, one in this many (default 0: never)
 * @property {number} budgetMs time until every instance must be final, else the run fails
 * @property {number} [processes] worker processes (default 3)
 * @property {'worker' | 'loop'} [mode] what each process runs: createWorker, or a runner.processDue
 *   loop (default worker)
 * @property {number} [loopLimit] instances per processDue call in loop mode (default 100, its own)
 * @property {boolean} [kills] SIGKILL worker processes during the run (default true)
 * @property {number} [claimMs] claim lease of the stores, driver and workers (default: each store's own)
 * @property {number} [timeoutMs] handler deadline of every task (default 2 s)
 * @property {number} [startsPerSecond] pace of the starts (default 40)
 * @property {number} [maxInFlight] starts wait while this many instances are not final (default 200)
 * @property {[number, number]} [killEveryMs] a SIGKILL every this many ms, chosen at random (default 1-3 s)
 * @property {boolean} [restart] run on the soak's own server (stores.mjs ownServer: made on first
 *   use, taken down by dropOwnServers) and stop/start it once mid-run
 * @property {boolean} [ownServer] run on the soak's own server even without a restart (so a
 *   baseline runs on the same server as the run it is compared with)
 * @property {import('./fault-schedule.mjs').FaultPhase[]} [faults] network faults played on the
 *   fault proxy every client of the run (driver and workers) connects through; none by default
 * @property {boolean} [proxy] connect through the fault proxy even without faults (default: with them)
 * @property {boolean} [repeatFaults] play `faults` in a loop until the run ends (default once)
 * @property {number} [maxBlackholes] blackholes played at most (default: every one in `faults`)
 * @property {(line: string) => void} [progress] progress lines (default none)
 * @property {number} [progressEveryMs] (default 3000)
 *
 * @typedef {object} SoakResult
 * @property {boolean} ok
 * @property {string} summary one line: store, mode, instances, kills, restarts, violations, seconds,
 *   latency, give-backs, conflicts
 * @property {string[]} violations
 * @property {number} kills
 * @property {{ dispatch: number, ended: number }} windows crash windows hit (self-kills in them)
 * @property {number} children tree children checked
 * @property {number} restarts
 * @property {string[]} crashes worker exits the driver did not cause
 * @property {number} seconds the whole run
 * @property {import('./metrics.mjs').Latency} latency ms from start to final state, cancel-fate
 *   instances left out (see `excluded`)
 * @property {number} excluded instances left out of `latency`
 * @property {import('./metrics.mjs').GiveBacks} giveBacks
 * @property {import('./metrics.mjs').FleetStats} fleet the worker processes' counters, summed
 * @property {number} driverConflicts conflicts the driver's own writes (starts, sends, cancels) retried
 * @property {import('./metrics.mjs').Drain} drain ms from the first start to the last final state
 * @property {import('./fault-schedule.mjs').FaultCounts} faults what the fault proxy injected
 * @property {import('./fault-proxy.mjs').FaultProxyStats} proxy the fault proxy's counters
 */

/**
 * Runs the soak on one store and checks its oracles.
 * @param {SoakOptions} o
 * @returns {Promise<SoakResult>}
 */
export async function runSoak(o) {
  const t0 = Date.now();
  const say = o.progress ?? (() => {});
  const ns = `soak_${Date.now().toString(36)}_${process.pid}`;
  const logDir = mkdtempSync(join(tmpdir(), 'stepfold-soak-'));
  // The soak's own server (made on first use, dropped by dropOwnServers), or the shared one.
  const own = o.restart || o.ownServer ? await ownServer(o.kind) : undefined;
  const direct = own?.url ?? storeUrl(o.kind);
  // With `proxy` (default: when there are faults), every client of the run goes through the fault
  // proxy, so a faulted run and a baseline given `proxy` pay the same extra hop.
  // STEPFOLD_SOAK_PROXY=off connects them directly (to tell the proxy's part in a result).
  const target = new URL(direct);
  const proxy = await startFaultProxy({ target: { host: target.hostname, port: Number(target.port) } });
  const proxied = (o.proxy ?? (o.faults?.length ?? 0) > 0) && process.env.STEPFOLD_SOAK_PROXY !== 'off';
  const url = proxied ? proxy.url(direct) : direct;
  const mode = o.mode ?? 'worker';
  const { store, close, drop } = openStore(o.kind, url, ns, o.claimMs);
  await retrying(() => store.setup());
  const log = openOracleLog(logDir, 'driver');
  // The driver only writes events: execute: false hands every task they dispatch to the workers.
  const timeoutMs = o.timeoutMs ?? TIMEOUT_MS;
  const runner = createRunner({
    // The driver's starts take the first grants of the flow workload's limits: recorded too (G).
    store: withGrantLog(store, log.grant),
    workflows: [...soakWorkflows(timeoutMs), ...flowWorkflows(timeoutMs)],
    handlers: { ...soakHandlers(log.call), ...flowHandlers(log.call, log.flow) },
    hooks: defineHooks(log.hooks),
    execute: false,
    kinds: KINDS,
  });
  // Trees are spread evenly among the mixed workflows.
  const trees = o.trees ?? 0;
  /** @type {Array<[string, import('./workflows.mjs').Design]>} */
  const plan = Array.from({ length: o.instances }, (_, i) =>
    o.flow ? [`${o.kind}-flow-${i}`, flowDesign(i)] : [`${o.kind}-${i}`, design(i)],
  );
  for (let j = trees - 1; j >= 0; j--) {
    const id = `${o.kind}-tree-${j}`;
    plan.splice(Math.floor(((j + 1) * o.instances) / (trees + 1)), 0, [id, treeDesign(j, id)]);
  }
  const ids = plan.map(([id]) => id);
  const designs = new Map(plan);
  const crashEvery = o.kills === false ? 0 : (o.crashEvery ?? 0);

  let restarts = 0;
  /** @type {Set<number>} */
  const killed = new Set();
  /** @type {Set<number>} processes that have served: written a counters (W) record */
  const serving = new Set();
  /** @type {Array<{ index: number, pid: number, how: string }>} exits the driver did not cause */
  const exits = [];
  /** @type {Map<number, number>} when each worker process died, by pid: its kill, else its exit */
  const deaths = new Map();
  const fleet = startFleet({
    module: new URL('./worker.mjs', import.meta.url),
    run: o,
    url,
    ns,
    logDir,
    crashEvery,
    env: { SOAK_MODE: mode, SOAK_LOOP_LIMIT: String(o.loopLimit ?? 100), SOAK_TIMEOUT_MS: String(timeoutMs) },
    exit(index, pid, code, signal, expected) {
      if (!deaths.has(pid)) deaths.set(pid, Date.now());
      // A worker that killed itself in a crash window says so in its log: sorted out at the end.
      if (!expected && !killed.has(pid)) exits.push({ index, pid, how: String(signal ?? code) });
    },
  });

  /** @type {Map<string, string>} final status by id, as the T records and loads tell */
  const final = new Map();
  const tail = new LogTail(logDir);
  /** @type {string[][]} */
  const records = [];
  const readLog = () => {
    const fresh = tail.read();
    for (const r of fresh) {
      records.push(r);
      // Children end too: only the driver's own instances count towards the run's end.
      if (r[0] === 'T' && r[1] && r[2] && designs.has(r[1])) final.set(r[1], r[2]);
      const pid = servingPid(r);
      if (pid) serving.add(pid);
    }
    return fresh;
  };
  /** @type {Set<string>} hold instances to cancel once they wait for their signal */
  const toCancel = new Set();
  let running = true;
  const deadline = t0 + o.budgetMs;

  // How many of `ids` (in order) have been started: the sweep below looks at these.
  let started = 0;
  const starting = (async () => {
    const pace = 1000 / (o.startsPerSecond ?? 40);
    // With kills on, the workload waits for two serving workers: the killer spares the last one,
    // so on a busy machine a short run could otherwise finish on the first worker up, unkilled.
    const fleetSize = Math.min(2, o.processes ?? 3);
    while (o.kills !== false && running && serving.size < fleetSize && Date.now() < deadline)
      await sleep(100);
    let next = Date.now();
    for (const [i, id] of ids.entries()) {
      const want = /** @type {import('./workflows.mjs').Design} */ (designs.get(id));
      // Back-pressure: a store slower than the pace gets a bounded backlog, not all of it at once.
      while (running && i - final.size >= (o.maxInFlight ?? 200)) await sleep(100);
      next = Math.max(next + pace, Date.now());
      await sleep(next - Date.now());
      if (!running) return;
      await retrying(
        () => runner.start(/** @type {Parameters<typeof runner.start>[0]} */ (want.workflow), id, want.input),
        'ALREADY_EXISTS',
      );
      started = i + 1;
      if (want.input.fate === 'cancel') toCancel.add(id);
      else if (want.workflow === 'soak-hold') {
        // Sent (runner.send: on PostgreSQL one statement into the store's inbox, applied by a
        // worker; elsewhere signal's path), before the wait is active: it waits in the snapshot's
        // inbox until then. The id makes a retry, or a second application, harmless. A processDue
        // loop has no inbox lane to apply sent signals: in loop mode the driver writes them itself.
        const go = { by: 'driver' };
        if (mode === 'loop') await retrying(() => runner.signal(id, 'go', go, { signalId: 'go' }));
        else await retrying(() => runner.send(id, 'go', go, { signalId: 'go' }));
      }
    }
  })();

  // Awaited after the run; until then a start that failed for good must not end the process as an
  // unhandled rejection (the run's error is reported with the run).
  starting.catch(() => {});

  const killer = killWorkers({
    fleet,
    serving,
    running: () => running,
    run: o,
    killing(pid) {
      killed.add(pid);
      deaths.set(pid, Date.now());
    },
  });

  /** @type {string[]} */
  const errors = [];
  const restarting = (async () => {
    if (!o.restart || !own) return;
    // Mid-run: once a third of the instances are final, or half the budget has passed.
    while (running && final.size < ids.length / 3 && Date.now() < t0 + o.budgetMs / 2) await sleep(200);
    if (!running) return;
    say(`[${o.kind}] stopping the server (${final.size}/${ids.length} final)`);
    await own.stop();
    await sleep(2000);
    await own.start();
    restarts++;
    say(`[${o.kind}] server started again`);
  })().catch((e) => void errors.push(`restarting the ${o.kind} server failed: ${e}`));

  const faulting = playFaults(proxy, o.faults ?? [], {
    running: () => running,
    repeat: o.repeatFaults ?? false,
    ...(o.maxBlackholes === undefined ? {} : { maxBlackholes: o.maxBlackholes }),
    say: (line) => say(`[${o.kind}] fault: ${line} (${secs(t0)}s)`),
  });

  let lastSay = 0;
  let endedAt = 0;
  let stuck = /** @type {string[]} */ ([]);
  try {
    for (let round = 1; ; round++) {
      // Every 10 s, ask the store about what the log does not tell: an instance whose final write
      // or whose reserve completion lost its record to a kill. The rest of the time the log does,
      // so the driver adds next to no reads to the store under test.
      const sweep = round % 20 === 0;
      for (const r of readLog()) {
        if (r[0] === 'S' && r[3] === 'reserve' && r[1] && toCancel.has(r[1]))
          await cancel(runner, toCancel, r[1]);
      }
      if (sweep) await cancelWaiting(runner, toCancel);
      const pending = ids.filter((id) => !final.has(id));
      // Only started ones can be final: at most the in-flight window (plus the one starting), so
      // the sweep stays small however many are left. Sweeping only when few were pending stalled
      // a run: finals the log missed filled the window, and no start came to end it.
      const begun = ids.slice(0, started + 1);
      if (sweep)
        await loadFinal(
          store,
          begun.filter((id) => !final.has(id)),
          final,
        );
      if (final.size === ids.length) break;
      if (Date.now() > deadline) {
        stuck = pending.filter((id) => !final.has(id));
        break;
      }
      if (Date.now() - lastSay >= (o.progressEveryMs ?? 3000)) {
        lastSay = Date.now();
        say(
          `[${o.kind}] ${final.size}/${ids.length} final, kills=${killer.kills}, restarts=${restarts}, ${secs(t0)}s`,
        );
      }
      await sleep(500);
    }
  } finally {
    endedAt = Date.now();
    running = false;
    await Promise.allSettled([starting, killer.done, restarting, faulting]);
    await fleet.stop();
  }
  await starting; // a start that failed for good is the run's error
  const faults = await faulting;

  readLog();
  /** @type {Map<string, Snapshot | null>} */
  const snapshots = new Map();
  await inBatches(ids, async (id) => void snapshots.set(id, await retrying(() => store.load(id))));
  // Stuck: not final in the store itself (the log may have missed a final write to a kill).
  const isFinal = (/** @type {Snapshot | null | undefined} */ s) =>
    s !== null && s !== undefined && ['completed', 'failed', 'cancelled', 'aborted'].includes(s.status);
  stuck = stuck.filter((id) => !isFinal(snapshots.get(id)));
  const done = new Map([...designs].filter(([id]) => !stuck.includes(id)));
  // Every instance is final: a sent signal still in the store's inbox was applied without being
  // consumed (or never applied), and would be applied again. Except a child's late report: when a
  // parent's deadline looked at the child first and applied its end, the report the child's own
  // writer sent arrives after, answers no task and is dropped by the next inbox pass of any worker;
  // the parent may end meanwhile (seen on FerretDB, which has no wake notices to hurry that pass).
  const { inbox } = store;
  const leftover = inbox ? await retrying(() => inbox.claim(Number.MAX_SAFE_INTEGER, 100)) : [];
  const late = (/** @type {(typeof leftover)[number]} */ d) =>
    isFinal(d.snapshot) && d.sent.every((x) => x.event.type === 'child.ended');
  const unconsumed = leftover.filter((d) => !late(d));
  const lateReports = leftover.filter(late).reduce((n, d) => n + d.sent.length, 0);
  // The trees' children: every designed one (of the trees that ended), and every soak-leaf stored.
  const childIds = [...done.values()].flatMap((d) => (d.children ?? []).map((c) => c.id));
  /** @type {Map<string, Snapshot | null>} */
  const children = new Map();
  await inBatches(childIds, async (id) => void children.set(id, await retrying(() => store.load(id))));
  const leaves = trees ? await retrying(() => listIds(store, 'soak-leaf')) : [];
  const violations = [
    ...errors,
    ...unconsumed.map(
      (d) => `${d.snapshot.id}: ${d.sent.length} sent signal(s) left in the inbox (${d.snapshot.status})`,
    ),
    ...stuck.map((id) => `${id}: not final after ${o.budgetMs} ms: ${describe(snapshots.get(id))}`),
    ...checkSnapshots(done, snapshots),
    ...checkChildren(done, snapshots, children, leaves),
    ...checkLog(records).violations,
  ];
  const flow = o.flow ? checkFlow(records, deaths) : undefined;
  if (flow) violations.push(...flow.violations);
  const { calls, reruns } = checkLog(records);
  // Latency leaves out the hold instances designed to be cancelled: they wait for the driver's
  // cancel, which it sends when it next reads their reserve's record (every 0.5 s, or its 10 s
  // sweep when a kill lost the record), so their time is the driver's pace, not the fleet's.
  const measured = ids.filter((id) => designs.get(id)?.input.fate !== 'cancel');
  const lat = latency(
    measured.map((id) => snapshots.get(id)),
    endedAt,
  );
  const dr = drain(
    ids.map((id) => snapshots.get(id)),
    endedAt,
  );
  // Instances the budget ended before the driver started (its back-pressure held them).
  const notStarted = ids.filter((id) => !snapshots.get(id)).length;
  const gb = giveBacks(records);
  // Self-kills in a crash window are planned; any other exit the driver did not cause is a crash.
  const windows = { dispatch: 0, ended: 0 };
  /** @type {Set<string>} */
  const selfKilled = new Set();
  for (const r of records) {
    if (r[0] !== 'X') continue;
    if (r[2] === 'dispatch' || r[2] === 'ended') windows[r[2]]++;
    selfKilled.add(r[4] ?? '');
  }
  const crashes = exits
    .filter((e) => !(e.how === 'SIGKILL' && selfKilled.has(String(e.pid))))
    .map((e) => `worker ${e.index} (pid ${e.pid}) exited: ${e.how}`);
  const fleetCounters = fleetStats(records);
  const ok = violations.length === 0;
  const seconds = (Date.now() - t0) / 1000;
  const summary =
    `store=${o.kind} mode=${mode} instances=${o.instances}${trees ? ` trees=${trees} children=${childIds.length}` : ''} ` +
    `kills=${killer.kills}${crashEvery ? ` window-kills=dispatch:${windows.dispatch},ended:${windows.ended}` : ''} restarts=${restarts} ` +
    `violations=${violations.length} not-final=${lat.notFinal}${notStarted ? ` not-started=${notStarted}` : ''} ` +
    `seconds=${seconds.toFixed(1)} ` +
    `latency-s p50=${s1(lat.p50)} p99=${s1(lat.p99)} max=${s1(lat.max)} (n=${lat.n}) ` +
    `drain-s=${dr.notFinal ? '≥' : ''}${s1(dr.ms)} tail-s=${dr.notFinal ? '≥' : ''}${s1(dr.tailMs)} ` +
    (o.faults?.length
      ? `faults: latency-phases=${faults.latencyPhases} reset-bursts=${faults.resetBursts} resets=${faults.resets} blackholes=${faults.blackholes} (${faults.blackholeMs / 1000} s) `
      : '') +
    `proxy-connections=${proxy.stats.connections} ` +
    `give-backs=${gb.total} max-per-attempt=${gb.maxPerAttempt} ` +
    `conflicts=${fleetCounters.conflicts} writes=${fleetCounters.writes} conflict-rate=${rate(fleetCounters.conflicts, fleetCounters.writes)} ` +
    `lost-races=${races(fleetCounters.lostRaces)} lost-takes=${fleetCounters.lostTakes} driver-conflicts=${runner.stats.conflicts} ` +
    `handler-calls=${calls} reruns=${reruns}${trees ? ` late-child-reports=${lateReports}` : ''}${flow ? ` flow-runs=${flow.runs} killed-runs=${flow.killed}` : ''} crashes=${crashes.length}${ok ? '' : ` kept=${ns}${own ? ` (own server, port ${own.port})` : ''} log=${logDir}`}`;
  log.close();
  if (ok) {
    await drop().catch(() => {});
    rmSync(logDir, { recursive: true, force: true });
  }
  await close();
  await proxy.close();
  return {
    ok,
    summary,
    violations,
    kills: killer.kills,
    windows,
    children: childIds.length,
    restarts,
    crashes,
    seconds,
    latency: lat,
    excluded: ids.length - measured.length,
    giveBacks: gb,
    fleet: fleetCounters,
    driverConflicts: runner.stats.conflicts,
    drain: dr,
    faults,
    proxy: { ...proxy.stats },
  };
}

/**
 * Cancels a hold instance once its reserve completed (it then waits for its signal), so its
 * rollback is deterministic: cancelled, with reserve compensated.
 * @param {import('@stepfold/engine').Runner} runner @param {Set<string>} ids @param {string} id
 */
async function cancel(runner, ids, id) {
  ids.delete(id);
  await retrying(() => runner.cancel(id, 'soak: cancel fate'));
}

/** Cancels the instances of `ids` that wait for their signal although no record said so yet. @param {import('@stepfold/engine').Runner} runner @param {Set<string>} ids */
async function cancelWaiting(runner, ids) {
  await inBatches([...ids], async (id) => {
    const s = await runner.get(id).catch(() => null);
    if (s?.steps.decide?.status === 'active') await cancel(runner, ids, id);
  });
}

/** @param {import('@stepfold/engine').Store} store @param {string[]} ids @param {Map<string, string>} final */
async function loadFinal(store, ids, final) {
  await inBatches(ids, async (id) => {
    const s = await store.load(id).catch(() => null);
    if (s && ['completed', 'failed', 'cancelled', 'aborted'].includes(s.status)) final.set(id, s.status);
  });
}

/** @param {Snapshot | null | undefined} s */
function describe(s) {
  if (!s) return 'no snapshot';
  const tasks = Object.values(s.tasks).map(describeTask).join(', ') || 'none';
  return `status ${s.status} v${s.version}, tasks ${tasks}, timers ${JSON.stringify(s.timers)}, wakeAt ${s.wakeAt}`;
}

/** @param {number} t0 */
const secs = (t0) => ((Date.now() - t0) / 1000).toFixed(1);
