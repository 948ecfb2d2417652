// The worker entry, `@stepfold/engine/worker`: kept out of the main entry so an edge bundle that
// only steps instances (a Worker, a Lambda) does not carry it.

export type {
  JobOutcome,
  PollOptions,
  ShutdownOptions,
  Worker,
  WorkerEvents,
  WorkerOptions,
  WorkerStats,
} from './types.js';
export { createWorker } from './worker.js';
