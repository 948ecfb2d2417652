// The worker entry, `@stepfold/engine`: `createWorker`, the long-lived process that polls a
// store and runs due work, with its options and observers. A per-event handler needs none of it.

export { type Backoff, backoffDelay, OUTAGE_BACKOFF } from '../backoff.js';
// The job a worker's `taskStart`/`taskEnd` observers are given.
export type { TaskJob } from '../runner/port.js';
export { MAX_GIVE_BACKS } from './task-pool.js';
export type {
  FleetPosition,
  JobOutcome,
  PollOptions,
  ShutdownOptions,
  Worker,
  WorkerEvents,
  WorkerOptions,
  WorkerStats,
} from './types.js';
export { createWorker, DEFAULT_CLAIM_LEASE_MS, DEFAULT_STANDBY_MS } from './worker.js';
