import { type ChildProcess, fork } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { type Backoff, backoffDelay } from '@stepfold/engine';

/** What the supervisor reports as its children come and go. */
export interface WorkerProcessEvents {
  spawn(index: number, pid: number): void;
  /** A child exited; `expected` when the supervisor was stopping it. */
  exit(
    index: number,
    pid: number,
    code: number | null,
    signal: NodeJS.Signals | null,
    expected: boolean,
  ): void;
  /** A child that died unasked is started again after `inMs`. */
  restart(index: number, inMs: number): void;
}

/** Options of {@link runWorkers}. */
export interface RunWorkersOptions {
  /** The worker program every child runs: a path or file URL of a module that calls `serveWorker`. */
  module: string | URL;
  /** How many child processes (default: the machine's available parallelism). */
  processes?: number | undefined;
  /** Arguments passed to each child. */
  args?: readonly string[] | undefined;
  /** Extra environment of each child; it also gets `STEPFOLD_WORKER_INDEX` (0-based) and `STEPFOLD_WORKERS` (read by {@link fleetFromEnv}). */
  env?: Readonly<Record<string, string>> | undefined;
  /**
   * Start a child again when it exits without being asked (default true): after 100 ms if it had
   * started its worker (`serveWorker` says so), else after a pause doubling up to 10 s, so a program
   * that cannot start is not restarted in a tight loop.
   */
  restart?: boolean | undefined;
  /** Stop the children when this process gets SIGTERM or SIGINT (default true). */
  handleSignals?: boolean | undefined;
  /** How long stopped children may drain before they are killed (default 40 000 ms). */
  killAfterMs?: number | undefined;
  on?: Partial<WorkerProcessEvents> | undefined;
}

/** The running children. */
export interface WorkerProcesses {
  /** Process ids of the live children, by index (0 while one is being restarted). */
  readonly pids: readonly number[];
  /** SIGTERMs every child (each drains its worker and exits), SIGKILLs what is left after `killAfterMs`. */
  stop(): Promise<void>;
  /** Resolves once `stop` has finished. */
  readonly done: Promise<void>;
}

// Restarts of a child that never started: the engine's retry schedule, from 100 ms to 10 s, with no
// jitter (these are this machine's own processes, not many clients of one server).
const RESTART: Backoff = { firstMs: 100, maxMs: 10_000, factor: 2, jitter: 0 };

/** The IPC message `serveWorker` sends once its worker has started. */
export const READY_MESSAGE = 'stepfold:worker-ready';

/**
 * Runs `processes` copies of a worker program over one store, so a workflow fleet uses every core:
 * each child builds its own runner and `createWorker` and calls `serveWorker`. A child that dies
 * (a crash, an OOM kill) is started again with backoff; its unfinished tasks come back through their
 * deadlines. `stop()` (or SIGTERM/SIGINT to this process) drains every child.
 *
 * @example
 * // supervisor.ts
 * const fleet = runWorkers({ module: new URL('./worker.js', import.meta.url), processes: 4 });
 * await fleet.done;
 */
export function runWorkers(options: RunWorkersOptions): WorkerProcesses {
  const count = options.processes ?? availableParallelism();
  if (!(Number.isInteger(count) && count >= 1)) throw new RangeError('processes must be a positive integer');
  const modulePath = options.module instanceof URL ? fileURLToPath(options.module) : options.module;
  const restart = options.restart ?? true;
  const killAfterMs = options.killAfterMs ?? 40_000;
  const children: Array<ChildProcess | undefined> = [];
  const pids: number[] = new Array(count).fill(0);
  const failedStarts: number[] = new Array(count).fill(0);
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let stopping = false;
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });

  const spawn = (index: number) => {
    const child = fork(modulePath, [...(options.args ?? [])], {
      env: {
        ...process.env,
        ...options.env,
        STEPFOLD_WORKER_INDEX: String(index),
        STEPFOLD_WORKERS: String(count),
      },
      stdio: 'inherit',
    });
    let ready = false;
    child.on('message', (m) => {
      if (m === READY_MESSAGE) ready = true;
    });
    children[index] = child;
    pids[index] = child.pid ?? 0;
    options.on?.spawn?.(index, child.pid ?? 0);
    child.on('exit', (code, signal) => {
      children[index] = undefined;
      pids[index] = 0;
      options.on?.exit?.(index, child.pid ?? 0, code, signal, stopping);
      if (stopping || !restart) return;
      // A worker that had started was killed (a crash, an OOM kill): back at once. One that never
      // started is failing to start: wait longer each time.
      if (ready) failedStarts[index] = 0;
      const ms = backoffDelay(RESTART, failedStarts[index]!++);
      options.on?.restart?.(index, ms);
      const t = setTimeout(() => {
        timers.delete(t);
        if (!stopping) spawn(index);
      }, ms);
      timers.add(t);
    });
  };

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      stopping = true;
      for (const t of timers) clearTimeout(t);
      const live = children.filter((c): c is ChildProcess => c !== undefined);
      await Promise.all(
        live.map(
          (c) =>
            new Promise<void>((resolve) => {
              if (c.exitCode !== null || c.signalCode !== null) return resolve();
              const kill = setTimeout(() => c.kill('SIGKILL'), killAfterMs);
              c.once('exit', () => {
                clearTimeout(kill);
                resolve();
              });
              c.kill('SIGTERM');
            }),
        ),
      );
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      finish();
    })();
    return stopped;
  };
  const onSignal = () => void stop();
  if (options.handleSignals ?? true) {
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  }
  for (let i = 0; i < count; i++) spawn(i);
  return { pids, stop, done };
}

/**
 * This process's place in a `runWorkers` fleet, for `createWorker`'s `fleet` option (so each task a
 * wake notice hands to every worker has one taker at once); undefined outside such a fleet.
 *
 * @example
 * const worker = createWorker({ runner, fleet: fleetFromEnv() });
 */
export function fleetFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
): { index: number; size: number } | undefined {
  const index = Number(env['STEPFOLD_WORKER_INDEX']);
  const size = Number(env['STEPFOLD_WORKERS']);
  if (!(Number.isSafeInteger(index) && Number.isSafeInteger(size) && index >= 0 && index < size))
    return undefined;
  return { index, size };
}
