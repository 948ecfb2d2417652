// @ts-check
// What the soak's two worker programs (worker.mjs, agent-worker.mjs) share: their settings from
// the environment the driver gives (the store, the oracle log, the crash rate), the createWorker
// they run on every store, and their life as a supervised child: counters (W) every second and
// once stopped, an unhandled rejection said and exited on, a drain on SIGTERM through serveWorker.
import { createWorker } from '@stepfold/engine';
import { fleetFromEnv, serveWorker } from '../../dist/index.js';
import { openOracleLog } from './oracle-log.mjs';
import { openStore } from './stores.mjs';

/** Pauses between polls, the same on every store: at most POLL_MAX_MS, how late a killed worker's tasks (2 s deadlines) may be found. */
export const POLL_MIN_MS = 50;
export const POLL_MAX_MS = 500;

/**
 * The environment of soak worker `program` (named in its errors): a reader of its required
 * variables, its store, its oracle log and its crash rate.
 * @param {string} program
 */
export function openSoakWorker(program) {
  const env = (/** @type {string} */ name) => {
    const value = process.env[name];
    if (!value) throw new Error(`${program}: ${name} is not set`);
    return value;
  };
  const kind = /** @type {import('./stores.mjs').StoreKind} */ (env('SOAK_STORE'));
  // Unset: the store's default claim lease, as an application gets it.
  const claimMs = process.env.SOAK_CLAIM_MS ? Number(process.env.SOAK_CLAIM_MS) : undefined;
  const { store, close } = openStore(kind, env('SOAK_URL'), env('SOAK_NS'), claimMs);
  const logDir = env('SOAK_LOG_DIR');
  const log = openOracleLog(logDir, `w${env('STEPFOLD_WORKER_INDEX')}-${process.pid}`);
  // SOAK_CRASH_EVERY=n: the process SIGKILLs itself in a crash window, one in n.
  const crashEvery = Number(process.env.SOAK_CRASH_EVERY || 0);
  return { env, store, close, logDir, log, crashEvery };
}

/**
 * The soak's createWorker over `runner`.
 * @param {import('@stepfold/engine').Runner} runner
 */
export function createSoakWorker(runner) {
  return createWorker({
    runner,
    concurrency: 8,
    // Stores without wake notices (MongoDB, DynamoDB) are found by polling alone, and a killed
    // worker's running deadlines are never announced on any store: poll at least twice a second.
    poll: { minMs: POLL_MIN_MS, maxMs: POLL_MAX_MS, maxWithWakesMs: POLL_MAX_MS },
    shutdown: { graceMs: 3000, abortMs: 1000 },
    // Its place among runWorkers' processes: each handed-over task has one taker at once.
    fleet: fleetFromEnv(),
  });
}

/**
 * Serves `worker` until SIGTERM (serveWorker), recording its and `runner`'s counters every second
 * and once stopped, then runs `close` and closes the log.
 * @param {string} program
 * @param {{ runner: import('@stepfold/engine').Runner, worker: import('@stepfold/engine').Worker,
 *   log: ReturnType<typeof openOracleLog>, close: () => Promise<void> }} o
 */
export async function serveSoakWorker(program, { runner, worker, log, close }) {
  // The runner counts every conflict its writes retried (the worker copies it once per round).
  const counters = () =>
    log.stats({
      conflicts: runner.stats.conflicts,
      lostTakes: worker.stats.lostTakes,
      released: worker.stats.released,
      polls: worker.stats.polls,
      ticks: worker.stats.ticks,
      writes: runner.stats.writes,
      lostRaces: runner.stats.lostRaces,
    });
  const every = setInterval(counters, 1000);
  every.unref();
  // A rejection nobody awaited would end the process with a crash the driver would count as a
  // kill it did not make; say what it was instead, and let the supervisor restart the process.
  process.on('unhandledRejection', (e) => {
    console.error(`${program} ${process.pid}: unhandled rejection`, e);
    process.exit(70);
  });
  await serveWorker(worker, {
    onStopped: async () => {
      clearInterval(every);
      counters();
      await close();
      log.close();
    },
  });
}
