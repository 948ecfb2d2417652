// @ts-check
// The agent workload's worker program (agent-driver.mjs forks it through runWorkers): the soak
// agent's handlers (agent-workload.mjs) in a createWorker over the store of SOAK_STORE, its counters
// (W) and ledger (L) in its own oracle log. With SOAK_CRASH_EVERY=n it SIGKILLs itself in the two
// crash windows, one conversation in n: mid-stream (the model's answer), and right after a tool
// call's terminal write lands, before the agent hears of it (window "settled").
import { composition, createRunner, createWorker, defineHooks } from '@stepfold/engine';
import { fleetFromEnv, serveWorker } from '../../dist/index.js';
import { AGENT, agentSoakHandlers, agentWorkflow, toolWorkflow, windowHit } from './agent-workload.mjs';
import { openOracleLog } from './oracle-log.mjs';
import { openStore } from './stores.mjs';

const env = (/** @type {string} */ name) => {
  const value = process.env[name];
  if (!value) throw new Error(`soak agent worker: ${name} is not set`);
  return value;
};

const kind = /** @type {import('./stores.mjs').StoreKind} */ (env('SOAK_STORE'));
const claimMs = process.env.SOAK_CLAIM_MS ? Number(process.env.SOAK_CLAIM_MS) : undefined;
const { store, close } = openStore(kind, env('SOAK_URL'), env('SOAK_NS'), claimMs);
const dir = env('SOAK_LOG_DIR');
const log = openOracleLog(dir, `w${env('STEPFOLD_WORKER_INDEX')}-${process.pid}`);
const crashEvery = Number(process.env.SOAK_CRASH_EVERY || 0);

/** Kills this process in `window` of `key` when it is hit (recorded first: X). @param {string} window @param {string} key */
const crash = (window, key) => {
  if (!windowHit(dir, crashEvery, window, key)) return;
  log.crash(key, window, key);
  process.kill(process.pid, 'SIGKILL');
};

/** @typedef {import('@stepfold/engine').Snapshot} Snapshot */
/** @param {Snapshot} s */
const afterWrite = (s) => {
  if (s.workflow.name === `${AGENT}-tool` && s.status === 'completed') crash('settled', s.id);
};
/** @type {import('@stepfold/engine').Store} */
const crashing = Object.assign(Object.create(store), {
  /** @param {Snapshot} s */
  async create(s) {
    await store.create(s);
    afterWrite(s);
  },
  /** @param {Parameters<import('@stepfold/engine').Store['save']>} a */
  async save(...a) {
    await store.save(...a);
    afterWrite(a[0]);
  },
});

const soak = agentSoakHandlers(log.ledger, crash);
const runner = createRunner({
  store: crashEvery > 0 ? crashing : store,
  workflows: [agentWorkflow, toolWorkflow],
  kinds: [composition],
  // The tool step appends a settled call's chunk to the agent's stream through the store.
  handlers: soak.handlers(store),
  hooks: defineHooks(log.hooks),
  // A killed worker's attempt is taken over this soon.
  taskLeaseMs: 2_000,
});
const worker = createWorker({
  runner,
  concurrency: 8,
  poll: { minMs: 50, maxMs: 500, maxWithWakesMs: 500 },
  shutdown: { graceMs: 3000, abortMs: 1000 },
  fleet: fleetFromEnv(),
});
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
process.on('unhandledRejection', (e) => {
  console.error(`soak agent worker ${process.pid}: unhandled rejection`, e);
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
