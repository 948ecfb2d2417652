import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { run as runWorker } from 'graphile-worker';
import { percentile, recreateDatabase, wallMs } from './common.js';
import { quietGraphileLogger } from './graphile-worker.js';

// Wake latency of graphile-worker: how long from a job being added by another process until its
// task function starts in an idle runner. The runner lives in this process with graphile-worker's
// defaults (LISTEN/NOTIFY on, concurrentJobs 1, poll interval 2 s as the fallback); the jobs come
// from a forked child (graphile-latency-child.ts) that adds one job at a time, after a random
// 10–30 ms pause, only once the previous job's task has started, with the wall clock it read just
// before `addJob` in the payload. A sample is the task's wall clock at entry minus that reading,
// in ms (same machine clock; `wallMs` in common.ts). The scheme for any other engine: a child that
// adds on `next` and stamps the payload, and a handler that reports `wallMs() - addedAt`
// (`collectWakeLatency` below is the parent's side).

const DB_NAME = 'stepfold_bench_graphile_latency';
const WARMUP = 5;

/**
 * Asks `child` for one job at a time (`next`) and collects `samples` latencies delivered through
 * `arrived`, after WARMUP discarded ones. Sends `stop` at the end.
 */
export async function collectWakeLatency(
  child: ChildProcess,
  samples: number,
  arrived: { next(): Promise<number> },
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < WARMUP + samples; i++) {
    child.send('next');
    const ms = await arrived.next();
    if (i >= WARMUP) out.push(ms);
  }
  child.send('stop');
  return out;
}

/** A queue of latencies: `push` from the task, `next` from the collecting loop. */
function latencyQueue(): { push(ms: number): void; next(): Promise<number> } {
  const ready: number[] = [];
  let waiting: ((ms: number) => void) | null = null;
  return {
    push(ms) {
      if (waiting) {
        const w = waiting;
        waiting = null;
        w(ms);
      } else ready.push(ms);
    },
    next() {
      const ms = ready.shift();
      if (ms !== undefined) return Promise.resolve(ms);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting = null;
          reject(new Error('no job started within 10 s'));
        }, 10_000);
        waiting = (v) => {
          clearTimeout(timer);
          resolve(v);
        };
      });
    },
  };
}

export async function graphileWakeLatency(
  pgUrl: string,
  samples: number,
): Promise<{ p50: number; p99: number; samples: number[] }> {
  const url = await recreateDatabase(pgUrl, DB_NAME);
  const queue = latencyQueue();
  const runner = await runWorker({
    connectionString: url,
    noHandleSignals: true,
    logger: quietGraphileLogger,
    crontab: '',
    taskList: {
      latency: async (payload) => {
        queue.push(wallMs() - (payload as { addedAt: number }).addedAt);
      },
    },
  });
  const child = fork(new URL('./graphile-latency-child.js', import.meta.url), [url], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = once(child, 'exit');
  try {
    const [msg] = (await Promise.race([
      once(child, 'message'),
      exited.then(([code]) => {
        throw new Error(`latency child exited with ${String(code)}`);
      }),
    ])) as [unknown];
    if (msg !== 'ready') throw new Error(`latency child said ${String(msg)}`);
    const out = await collectWakeLatency(child, samples, queue);
    await exited;
    return { p50: percentile(out, 50), p99: percentile(out, 99), samples: out };
  } finally {
    child.kill();
    await runner.stop();
  }
}
