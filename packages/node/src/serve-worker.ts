import type { ShutdownOptions, Worker } from '@stepfold/engine';
import { READY_MESSAGE } from './run-workers.js';

/** Options of {@link serveWorker}. */
export interface ServeWorkerOptions {
  /** Signals that drain the worker and end the process (default SIGTERM and SIGINT). */
  signals?: readonly NodeJS.Signals[] | undefined;
  /** Drain times passed to `worker.stop` (defaults: the worker's). */
  shutdown?: ShutdownOptions | undefined;
  /** Called once the worker has stopped, before the process exits (close pools here). */
  onStopped?(): void | Promise<void>;
  /** Exit the process once stopped (default true). */
  exit?: boolean | undefined;
}

/**
 * Starts `worker` in this process and drains it on SIGTERM/SIGINT: polling stops, running
 * handlers get their grace, runs not started are given back to any worker, then `onStopped` runs
 * and the process exits 0. Under `runWorkers` the
 * supervisor sends the SIGTERM. Resolves once the worker has started.
 *
 * @example
 * const worker = createWorker({ runner, concurrency: 20 });
 * await serveWorker(worker, { onStopped: () => pool.end() });
 */
export async function serveWorker(worker: Worker, options: ServeWorkerOptions = {}): Promise<void> {
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  let stopping = false;
  const onSignal = () => {
    if (stopping) return;
    stopping = true;
    void (async () => {
      try {
        await worker.stop(options.shutdown);
        await options.onStopped?.();
      } finally {
        for (const s of signals) process.off(s, onSignal);
        if (options.exit ?? true) process.exit(0);
      }
    })();
  };
  for (const s of signals) process.on(s, onSignal);
  await worker.start();
  // Under runWorkers: a child that got this far restarts at once if it is killed.
  process.send?.(READY_MESSAGE);
}
