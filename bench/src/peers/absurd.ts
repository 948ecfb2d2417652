import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Absurd } from 'absurd-sdk';
import pg from 'pg';
import { keepInFlight, pinnedVersion, recreateDatabase, Waiters } from './common.js';

// Absurd (absurd-sdk): a task of 10 no-op `ctx.step`s, each checkpointed in PostgreSQL. Measured:
// tasks/s with the driver keeping `concurrency` tasks in flight (`spawn` as soon as one is done)
// and a worker of concurrency 4 in this process. A task counts as done once its run's completion
// is committed (observed in-process through the SDK's `wrapTaskExecution` hook, which wraps the
// handler and the completing query), not by polling `awaitTaskResult` (50 ms–1 s backoff).
// Absurd's worker polls for work (no LISTEN/NOTIFY): its `pollInterval` is ABSURD_POLL_SECONDS.
//
// Schema: the npm package ships no SQL. Absurd's schema is installed by its CLI, `absurdctl init`
// (PyPI package `absurdctl`, which bundles absurd.sql of its own version and applies it with
// psql): `pip install absurdctl==0.5.0` (the release matching absurd-sdk 0.5.0). `launch` runs
// `absurdctl init` (or $ABSURDCTL) on a database of its own, recreated per launch, then creates the
// queue through the SDK.

export const ABSURD_VERSION = pinnedVersion('absurd-sdk');

const DB_NAME = 'stepfold_bench_absurd';
const QUEUE = 'bench';
const STEPS = Array.from({ length: 10 }, (_, i) => `s${i + 1}`);
/** Tasks the worker runs at once. */
export const ABSURD_WORKER_CONCURRENCY = 4;
/** Seconds the idle worker waits between polls (the SDK's default is 0.25). */
export const ABSURD_POLL_SECONDS = Number(process.env['STEPFOLD_ABSURD_POLL_SECONDS'] ?? 0.25);

const noop = async () => null;

let app: Absurd | null = null;
let pool: pg.Pool | null = null;
let worker: { close(): Promise<void> } | null = null;
const tasks = new Waiters<string>();

// Where the bench installs absurdctl when it is not on the PATH: a venv under the repo's .services/.
const VENV = fileURLToPath(new URL('../../../.services/absurdctl-venv', import.meta.url));

/** absurdctl: $ABSURDCTL, else one on the PATH, else installed (pinned) into a venv of the bench's own. */
async function absurdctl(): Promise<string> {
  if (process.env['ABSURDCTL']) return process.env['ABSURDCTL'];
  const run = promisify(execFile);
  try {
    await run('absurdctl', ['--help'], { timeout: 30_000 });
    return 'absurdctl';
  } catch {
    // Not on the PATH: use (or make) the venv.
  }
  const bin = `${VENV}/bin/absurdctl`;
  if (!existsSync(bin)) {
    process.stderr.write(`  absurd: installing absurdctl==${ABSURD_VERSION} from PyPI into ${VENV}\n`);
    await run('python3', ['-m', 'venv', VENV], { timeout: 120_000 });
    await run(`${VENV}/bin/pip`, ['install', '--quiet', `absurdctl==${ABSURD_VERSION}`], {
      timeout: 300_000,
    });
  }
  return bin;
}

/** Installs Absurd's schema into the database at `url` with absurdctl. */
async function installSchema(url: string): Promise<void> {
  const bin = await absurdctl();
  try {
    await promisify(execFile)(bin, ['init', '-d', url], { timeout: 60_000 });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    if (err.code === 'ENOENT') {
      throw new Error(
        `Absurd's schema needs absurdctl (the npm package ships no SQL): pip install absurdctl==${ABSURD_VERSION}`,
      );
    }
    throw new Error(`absurdctl init failed: ${err.stderr?.trim() || err.message}`);
  }
}

export async function launch(pgUrl: string): Promise<void> {
  const url = await recreateDatabase(pgUrl, DB_NAME);
  await installSchema(url);
  pool = new pg.Pool({ connectionString: url, max: ABSURD_WORKER_CONCURRENCY + 2 });
  const a = new Absurd({
    db: pool,
    queueName: QUEUE,
    log: { log() {}, info() {}, warn: console.warn, error: console.error },
    hooks: {
      async wrapTaskExecution(ctx, execute) {
        const result = await execute();
        tasks.done(ctx.taskID);
        return result;
      },
    },
  });
  await a.createQueue(QUEUE);
  a.registerTask({ name: 'benchLinear10' }, async (params: { n: number }, ctx) => {
    for (const name of STEPS) await ctx.step(name, noop);
    return params.n;
  });
  worker = await a.startWorker({
    concurrency: ABSURD_WORKER_CONCURRENCY,
    pollInterval: ABSURD_POLL_SECONDS,
  });
  app = a;
}

export async function run(count: number, concurrency: number, first: number): Promise<number> {
  const a = app;
  if (!a) throw new Error('launch Absurd first');
  return keepInFlight(count, concurrency, first, async (n) => {
    const { taskID } = await a.spawn('benchLinear10', { n });
    await tasks.wait(taskID);
  });
}

export async function shutdown(): Promise<void> {
  const w = worker;
  const a = app;
  const p = pool;
  worker = null;
  app = null;
  pool = null;
  await w?.close();
  await a?.close();
  await p?.end();
}
