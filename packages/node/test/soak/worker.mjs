// @ts-check
// The worker program `runWorkers` forks (plain ESM: a forked child runs plain node, which cannot
// load TypeScript on Node 20). It reads the store and the mode from its environment, runs the soak
// handlers in a worker (SOAK_MODE=worker: createWorker; loop: a runner.processDue loop), records
// every handler call, every completion and give-back its writes make and, every second and once
// stopped, its counters in its own oracle log file, and drains on SIGTERM through serveWorker. The
// driver SIGKILLs it at random; the supervisor starts it again.
import { createRunner, defineHooks } from '@stepfold/engine';
import { crashingStore } from './crash-windows.mjs';
import { flowHandlers, flowWorkflows, withGrantLog } from './flow-workload.mjs';
import { createLoopWorker } from './loop-worker.mjs';
import { createSoakWorker, openSoakWorker, POLL_MIN_MS, serveSoakWorker } from './worker-process.mjs';
import { KINDS, soakHandlers, soakWorkflows } from './workflows.mjs';

const PROGRAM = 'soak worker';
const { env, store, close, log, crashEvery } = openSoakWorker(PROGRAM);
const mode = env('SOAK_MODE');
if (mode !== 'loop' && mode !== 'worker') throw new Error(`${PROGRAM}: SOAK_MODE ${mode}`);
// Grants of the store's flow are recorded (G) for the flow workload's oracle.
const logged = withGrantLog(store, log.grant);
const timeoutMs = Number(env('SOAK_TIMEOUT_MS'));
const runner = createRunner({
  // With SOAK_CRASH_EVERY, in a child workflow's crash windows.
  store: crashEvery > 0 ? crashingStore(logged, crashEvery, log.crash) : logged,
  workflows: [...soakWorkflows(timeoutMs), ...flowWorkflows(timeoutMs)],
  handlers: { ...soakHandlers(log.call), ...flowHandlers(log.call, log.flow) },
  hooks: defineHooks(log.hooks),
  kinds: KINDS,
});
// The loop mode's worker, poll-only, doubles its pause from POLL_MIN_MS to a shorter LOOP_MAX_MS.
const LOOP_MAX_MS = 250;
const worker =
  mode === 'loop'
    ? createLoopWorker(runner, {
        minMs: POLL_MIN_MS,
        maxMs: LOOP_MAX_MS,
        limit: Number(process.env.SOAK_LOOP_LIMIT || 100),
      })
    : createSoakWorker(runner);
await serveSoakWorker(PROGRAM, { runner, worker, log, close });
