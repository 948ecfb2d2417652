// @ts-check
// What the soak's drivers (driver.mjs, agent-driver.mjs) share: the fleet of worker processes on
// the run's store, the loop that SIGKILLs them, and the store calls retried through an outage.
import { setTimeout as sleep } from 'node:timers/promises';
import { isStepfoldError } from '@stepfold/engine';
import { runWorkers } from '../../dist/index.js';

/**
 * @typedef {object} FleetOptions
 * @property {URL} module the worker process's module (worker.mjs, agent-worker.mjs)
 * @property {{ kind: import('./stores.mjs').StoreKind, processes?: number, claimMs?: number }} run
 *   the run's options: its store, worker processes (default 3), claim lease (default: the store's own)
 * @property {string} url the store's URL
 * @property {string} ns the run's namespace on the store
 * @property {string} logDir where each process writes its oracle log
 * @property {number} crashEvery self-kills in a crash window, one in this many (0: never)
 * @property {Record<string, string>} [env] more environment for the workload
 * @property {import('../../src/run-workers.js').WorkerProcessEvents['exit']} exit every exit of a worker process
 */

/** The fleets started and not yet stopped, for {@link stopFleets}. */
const live = new Set();

/**
 * Starts the worker processes of a soak run (runWorkers; no signal handling, 10 s to stop).
 * @param {FleetOptions} o
 */
export function startFleet(o) {
  const fleet = runWorkers({
    module: o.module,
    processes: o.run.processes ?? 3,
    env: {
      SOAK_STORE: o.run.kind,
      SOAK_URL: o.url,
      SOAK_NS: o.ns,
      SOAK_LOG_DIR: o.logDir,
      SOAK_CLAIM_MS: o.run.claimMs === undefined ? '' : String(o.run.claimMs),
      SOAK_CRASH_EVERY: String(o.crashEvery),
      ...o.env,
      // The AWS SDK warns on every start of a child on Node 20 about its future Node 22 floor.
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    handleSignals: false,
    killAfterMs: 10_000,
    on: { exit: o.exit },
  });
  live.add(fleet);
  fleet.done.then(() => live.delete(fleet));
  return fleet;
}

/** Stops every fleet still running (the soak ends early: an error, SIGINT): SIGTERM, SIGKILL after 10 s. */
export async function stopFleets() {
  await Promise.all([...live].map((fleet) => fleet.stop()));
}

/**
 * The pid of the worker process that wrote oracle-log record `r` when it is a counters (W) record,
 * which a process writes once a second while it serves.
 * @param {string[]} r @returns {number | undefined}
 */
export function servingPid(r) {
  return r[0] === 'W' && r[1] ? Number(r[1].slice(r[1].lastIndexOf('-') + 1)) : undefined;
}

/**
 * @typedef {object} Killer
 * @property {number} kills SIGKILLs sent so far
 * @property {Promise<void>} done settles once `running()` is false (at its next pause)
 */

/**
 * SIGKILLs a random serving worker process every `run.killEveryMs` (chosen at random between the
 * two, default 1-3 s) while `running()`; none when `run.kills` is false. Only a process that has started serving (it writes its counters once a
 * second): one killed while it boots (seconds on a busy machine) counts as failing to start, and
 * runWorkers restarts those with a backoff growing to 10 s, so a long run with kills every second
 * or two ended up with most of its fleet waiting out backoffs. And never the last serving worker:
 * a fleet in which every child waits out its restart only measures that.
 * @param {{ fleet: { pids: readonly number[] }, serving: Set<number>, running: () => boolean,
 *   run: { kills?: boolean, killEveryMs?: [number, number] }, refresh?: () => void,
 *   killing?: (pid: number) => void }} o
 *   `refresh` runs before each pick (reads the log that fills `serving`); `killing` is told each
 *   pid about to be killed
 * @returns {Killer}
 */
export function killWorkers(o) {
  const [min, max] = o.run.killEveryMs ?? [1000, 3000];
  /** @type {Killer} */
  const killer = { kills: 0, done: Promise.resolve() };
  killer.done = (async () => {
    while (o.run.kills !== false && o.running()) {
      await sleep(min + Math.random() * (max - min));
      o.refresh?.();
      const live = o.fleet.pids.filter((p) => p > 0 && o.serving.has(p));
      if (!o.running() || live.length < 2) continue;
      const pid = /** @type {number} */ (live[Math.floor(Math.random() * live.length)]);
      o.killing?.(pid);
      try {
        process.kill(pid, 'SIGKILL');
        killer.kills++;
      } catch {
        // It exited on its own meanwhile.
      }
    }
  })();
  return killer;
}

/**
 * Calls `f` until it succeeds, retrying what the store reports as retryable (an outage) for up to
 * a minute; an error with code `done` counts as success (a retried start whose first write landed).
 * @template T @param {() => Promise<T>} f @param {import('@stepfold/engine').ErrorCode} [done] @returns {Promise<T>}
 */
export async function retrying(f, done) {
  for (let i = 0; ; i++) {
    try {
      return await f();
    } catch (e) {
      if (done && isStepfoldError(e, done)) return /** @type {T} */ (undefined);
      const retryable = isStepfoldError(e) && e.retryable;
      if (!retryable || i >= 120) throw e;
      await sleep(500);
    }
  }
}

/**
 * Runs `f` on every item, `size` at a time.
 * @template T @param {T[]} items @param {(item: T) => Promise<void>} f
 */
export async function inBatches(items, f, size = 16) {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(f));
}
