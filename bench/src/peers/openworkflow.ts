import { OpenWorkflow, type Worker } from 'openworkflow';
import { BackendPostgres } from 'openworkflow/postgres';
import { keepInFlight, pinnedVersion, recreateDatabase, Waiters } from './common.js';

// OpenWorkflow with its PostgreSQL backend (`openworkflow/postgres`, on the `postgres` driver): a
// workflow of 10 no-op `step.run`s. Measured: workflows/s with the driver keeping `concurrency`
// runs in flight (`run` as soon as one is done) and a worker of concurrency 4 in this process.
// A run counts as done once the backend's `completeWorkflowRun` has returned (observed in-process
// by wrapping that one backend method), not by polling the run handle's `result()`, which checks
// once a second. The worker polls for work with its built-in backoff (100 ms doubling to 1 s,
// jittered, reset whenever it claims something); it has no setting for that. Its tables live
// in a database of its own on the same server, recreated per launch; `BackendPostgres.connect`
// runs the migrations.

export const OPENWORKFLOW_VERSION = pinnedVersion('openworkflow');
/** The driver under the backend (a peer dependency of openworkflow/postgres). */
export const POSTGRES_JS_VERSION = pinnedVersion('postgres');

const DB_NAME = 'stepfold_bench_openworkflow';
const STEPS = Array.from({ length: 10 }, (_, i) => `s${i + 1}`);
/** Runs the worker executes at once. */
export const OPENWORKFLOW_WORKER_CONCURRENCY = 4;

let backend: BackendPostgres | null = null;
let worker: Worker | null = null;
let start: ((n: number) => Promise<string>) | null = null;
const runs = new Waiters<string>();

/** `b` with `completeWorkflowRun` reporting each completed run to `runs`. */
function reportingCompletions(b: BackendPostgres): BackendPostgres {
  return new Proxy(b, {
    get(target, key) {
      if (key === 'completeWorkflowRun') {
        return async (params: Parameters<BackendPostgres['completeWorkflowRun']>[0]) => {
          const run = await target.completeWorkflowRun(params);
          runs.done(params.workflowRunId);
          return run;
        };
      }
      const v: unknown = Reflect.get(target, key, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

export async function launch(pgUrl: string): Promise<void> {
  const url = await recreateDatabase(pgUrl, DB_NAME);
  const b = await BackendPostgres.connect(url);
  const ow = new OpenWorkflow({ backend: reportingCompletions(b) });
  const wf = ow.defineWorkflow<{ n: number }, number>(
    { name: 'bench-linear-10' },
    async ({ input, step }) => {
      for (const name of STEPS) await step.run({ name }, () => null);
      return input.n;
    },
  );
  const w = ow.newWorker({ concurrency: OPENWORKFLOW_WORKER_CONCURRENCY });
  await w.start();
  backend = b;
  worker = w;
  start = async (n) => (await wf.run({ n })).workflowRun.id;
}

export async function run(count: number, concurrency: number, first: number): Promise<number> {
  const s = start;
  if (!s) throw new Error('launch OpenWorkflow first');
  return keepInFlight(count, concurrency, first, async (n) => {
    await runs.wait(await s(n));
  });
}

export async function shutdown(): Promise<void> {
  const w = worker;
  const b = backend;
  worker = null;
  backend = null;
  start = null;
  await w?.stop();
  await b?.stop();
}
