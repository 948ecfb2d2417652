// What only a worker reaches of a runner: the jobs its writes dispatch and the executor that takes them.

import type { TaskState } from '../snapshot.js';

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
