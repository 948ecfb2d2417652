import { Logger, type Runner, run as runWorker, type Task } from 'graphile-worker';
import { keepInFlight, pinnedVersion, recreateDatabase, Waiters } from './common.js';

// graphile-worker: a job queue, not a workflow engine, so its "10-step workflow" is a chain of 10
// jobs. Job k's task adds job k+1 (same chain id in the payload) through its helpers; the 10th job
// reports its chain done. Measured: chains/s with the driver keeping `concurrency` chains in flight
// (a chain is started with `runner.addJob` as soon as one finishes) and a runner of 4 concurrent
// jobs (`concurrentJobs` 4) in this process, LISTEN/NOTIFY on, other settings at their defaults.
// A chain counts as done when its 10th task function returns (graphile-worker then completes
// that job in the background, off the chain's critical path, as it does for every job). Its
// schema lives in its own database on the same server, recreated per launch; `launch` runs
// graphile-worker's migrations there (what `run` does on start).

export const GRAPHILE_WORKER_VERSION = pinnedVersion('graphile-worker');

const DB_NAME = 'stepfold_bench_graphile';
const CHAIN_LENGTH = 10;
/** Jobs run at once by the runner (graphile-worker's `concurrentJobs`). */
export const GRAPHILE_CONCURRENT_JOBS = 4;

interface ChainPayload {
  chain: number;
  k: number;
}

/** graphile-worker's logger with only warnings and errors (it logs every completed job at info). */
export const quietGraphileLogger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') console.error(`[graphile-worker] ${message}`);
});

let runner: Runner | null = null;
const chains = new Waiters<number>();

const chainTask: Task = async (payload, helpers) => {
  const { chain, k } = payload as ChainPayload;
  if (k < CHAIN_LENGTH) await helpers.addJob('chain', { chain, k: k + 1 } satisfies ChainPayload);
  else chains.done(chain);
};

export async function launch(pgUrl: string): Promise<void> {
  const url = await recreateDatabase(pgUrl, DB_NAME);
  runner = await runWorker({
    connectionString: url,
    concurrency: GRAPHILE_CONCURRENT_JOBS,
    noHandleSignals: true,
    logger: quietGraphileLogger,
    taskList: { chain: chainTask },
    crontab: '',
  });
}

export async function run(count: number, concurrency: number, first: number): Promise<number> {
  const r = runner;
  if (!r) throw new Error('launch graphile-worker first');
  return keepInFlight(count, concurrency, first, async (n) => {
    const done = chains.wait(n);
    await r.addJob('chain', { chain: n, k: 1 } satisfies ChainPayload);
    await done;
  });
}

export async function shutdown(): Promise<void> {
  const r = runner;
  runner = null;
  if (r) await r.stop();
}
