// @ts-check
// The worker program `runWorkers` forks (plain ESM: a forked child runs plain node, which cannot
// load TypeScript on Node 20). It reads the store and the mode from its environment, runs the soak
// handlers in a worker (SOAK_MODE=worker: createWorker; loop: a runner.processDue loop), records
// every handler call, every completion and give-back its writes make and, every second and once
// stopped, its counters in its own oracle log file, and drains on SIGTERM through serveWorker. The
// driver SIGKILLs it at random; the supervisor starts it again.
import { createRunner, createWorker, defineHooks } from '@stepfold/engine';
import { fleetFromEnv, serveWorker } from '../../dist/index.js';
import { crashingStore } from './crash-windows.mjs';
import { flowHandlers, flowWorkflows, withGrantLog } from './flow-workload.mjs';
import { createLoopWorker } from './loop-worker.mjs';
import { openOracleLog } from './oracle-log.mjs';
import { openStore } from './stores.mjs';
import { KINDS, soakHandlers, soakWorkflows } from './workflows.mjs';

const env = (/** @type {string} */ name) => {
  const value = process.env[name];
  if (!value) throw new Error(`soak worker: ${name} is not set`);
  return value;
};

const kind = /** @type {import('./stores.mjs').StoreKind} */ (env('SOAK_STORE'));
const mode = env('SOAK_MODE');
if (mode !== 'loop' && mode !== 'worker') throw new Error(`soak worker: SOAK_MODE ${mode}`);
// Unset: the store's default claim lease, as an application gets it.
const claimMs = process.env.SOAK_CLAIM_MS ? Number(process.env.SOAK_CLAIM_MS) : undefined;
const { store, close } = openStore(kind, env('SOAK_URL'), env('SOAK_NS'), claimMs);
const log = openOracleLog(env('SOAK_LOG_DIR'), `w${env('STEPFOLD_WORKER_INDEX')}-${process.pid}`);
// SOAK_CRASH_EVERY=n: this process SIGKILLs itself in a child workflow's crash window, one in n.
const crashEvery = Number(process.env.SOAK_CRASH_EVERY || 0);
// Grants of the store's flow are recorded (G) for the flow workload's oracle.
const logged = withGrantLog(store, log.grant);
const timeoutMs = Number(env('SOAK_TIMEOUT_MS'));
const runner = createRunner({
  store: crashEvery > 0 ? crashingStore(logged, crashEvery, log.crash) : logged,
  workflows: [...soakWorkflows(timeoutMs), ...flowWorkflows(timeoutMs)],
  handlers: { ...soakHandlers(log.call), ...flowHandlers(log.call, log.flow) },
  hooks: defineHooks(log.hooks),
  kinds: KINDS,
});
// Pauses between polls, the same on every store (FerretDB's polls are index searches in our build):
// at most POLL_MAX_MS, how late a killed worker's tasks (2 s deadlines) may be found; the loop
// mode's worker, poll-only, doubles from POLL_MIN_MS to a shorter LOOP_MAX_MS.
const POLL_MIN_MS = 50;
const POLL_MAX_MS = 500;
const LOOP_MAX_MS = 250;
const worker =
  mode === 'loop'
    ? createLoopWorker(runner, {
        minMs: POLL_MIN_MS,
        maxMs: LOOP_MAX_MS,
        limit: Number(process.env.SOAK_LOOP_LIMIT || 100),
      })
    : createWorker({
        runner,
        concurrency: 8,
        // Stores without wake notices (MongoDB, DynamoDB) are found by polling alone, and a killed
        // worker's running deadlines are never announced on any store: poll at least twice a second.
        poll: { minMs: POLL_MIN_MS, maxMs: POLL_MAX_MS, maxWithWakesMs: POLL_MAX_MS },
        shutdown: { graceMs: 3000, abortMs: 1000 },
        // Its place among runWorkers' processes: each handed-over task has one taker at once.
        fleet: fleetFromEnv(),
      });
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

// A rejection nobody awaited would end the process with a crash the driver would count as a kill
// it did not make; say what it was instead, and let the supervisor restart the process.
process.on('unhandledRejection', (e) => {
  console.error(`soak worker ${process.pid}: unhandled rejection`, e);
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
