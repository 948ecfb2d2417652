// @ts-check
// The agent workload's worker program (agent-driver.mjs forks it through runWorkers): the soak
// agent's handlers (agent-workload.mjs) in a createWorker over the store of SOAK_STORE, its counters
// (W) and ledger (L) in its own oracle log. With SOAK_CRASH_EVERY=n it SIGKILLs itself in the two
// crash windows, one conversation in n: mid-stream (the model's answer), and right after a tool
// call's terminal write lands, before the agent hears of it (window "settled").
import { composition, createRunner, defineHooks } from '@stepfold/engine';
import { AGENT, agentSoakHandlers, agentWorkflow, toolWorkflow, windowHit } from './agent-workload.mjs';
import { createSoakWorker, openSoakWorker, serveSoakWorker } from './worker-process.mjs';

const PROGRAM = 'soak agent worker';
const { store, close, logDir: dir, log, crashEvery } = openSoakWorker(PROGRAM);

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
const worker = createSoakWorker(runner);
await serveSoakWorker(PROGRAM, { runner, worker, log, close });
