// What only a worker reaches of a runner: the jobs its writes dispatch, the executor that takes
// them, and the tick that starts from what the worker took from the store. A worker gets them with
// `runnerPort(runner)`; none is on the `Runner` type, so a user's surface stays what users call.

import type { Snapshot, TaskState } from '../snapshot.js';
import type { SentSignal } from '../store/store.js';
import type { HandleResult, Runner } from './types.js';

/** A handler run a write of the runner dispatched, handed to the {@link TaskExecutor} of a worker. */
export interface TaskJob {
  readonly instanceId: string;
  readonly workflow: string;
  /** The task as dispatched: step, phase, attempt, idempotency key, handler, deadline (epoch ms). */
  readonly task: Readonly<TaskState>;
  /**
   * Runs the handler and writes its result (with the runner's conflict retries). Resolves with
   * whether the handler returned (`completed`) or threw (`failed`); rejects if the result could not
   * be written (the deadline re-dispatches the task).
   */
  run(): Promise<'completed' | 'failed'>;
  /** Gives the job up unrun; its deadline hands the task to another runner with the same key. */
  drop(): void;
  /**
   * Gives the job up unrun and writes it back as queued for any worker (same attempt and key), so
   * no one waits out its deadline; resolves once written, rejects if the write failed (the deadline
   * then hands it on, as after `drop`).
   */
  release(): Promise<void>;
  /** Fires the running handler's AbortSignal (a worker out of grace time). */
  abort(reason: unknown): void;
}

/** Decides where and when the handler runs of a runner execute: see `createWorker`. */
export type TaskExecutor = (job: TaskJob) => void;

/** A worker's tick of one instance, with what it already took from the store. */
export interface TickRequest {
  id: string;
  /** The tick's time (default the runner's clock). */
  now?: number | undefined;
  /** The instance as the store just returned it (`claimDue`, a notice): used instead of a load and checked like one (ignored if its id differs). */
  loaded?: Snapshot | undefined;
  /**
   * `'fail'`: a write that loses a race throws VERSION_CONFLICT instead of reloading and
   * re-applying (default `'reapply'`). For a tick from a `loaded` snapshot others may act on too:
   * the winner's write is announced again if the instance is still due.
   */
  onConflict?: 'reapply' | 'fail' | undefined;
  /** With `loaded`: signals sent to it and waiting in the store's inbox, applied first and consumed by the same write. */
  sent?: readonly SentSignal[] | undefined;
}

/** What a worker's tick answers: a {@link HandleResult} and what the worker reports of the tick. */
export interface TickResult extends HandleResult {
  /** For a tick that was written: the wake time the instance had when the tick applied (its lag is `now - dueAt`); undefined if nothing was written. */
  dueAt: number | null | undefined;
  /** The `sent` signals the instance refused for good (skipped, and consumed with the write). */
  refused: unknown[];
}

/** The part of a runner only a worker drives. */
export interface RunnerPort {
  /** Ticks one instance and resolves once the tick is written (its handlers go to the executor). */
  tick(request: TickRequest): Promise<TickResult>;
  /**
   * Sends every handler run this runner's writes dispatch to `executor` instead of running it at
   * once (how a worker bounds concurrency), and every snapshot it writes to `written`; returns the
   * function that detaches them again.
   */
  executeWith(executor: TaskExecutor, written?: (snapshot: Snapshot) => void): () => void;
}

// A symbol no other module can name keeps the port off the Runner type. A property rather than a
// WeakMap entry, so a runner spread into a new object or wrapped in a Proxy still drives a worker.
const PORT = Symbol('stepfold.runnerPort');

/** Gives `runner` its port (`createRunner` does, once). */
export function withPort<R extends object>(runner: R, port: RunnerPort): R {
  return Object.assign(runner, { [PORT]: port });
}

/** The port of a runner `createRunner` made; throws for anything else (say, a runner of another copy of the engine). */
export function runnerPort(runner: Runner): RunnerPort {
  const port = (runner as { [PORT]?: RunnerPort })[PORT];
  if (!port)
    throw new TypeError('not a runner createRunner made (is a second copy of @stepfold/engine loaded?)');
  return port;
}
