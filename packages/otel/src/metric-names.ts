// The names, units and bucket boundaries of every instrument @stepfold/otel records, in one place:
// docs/metrics.md and the Grafana dashboard in examples/ are written against these.

/** The instrumentation scope name metrics are recorded under (the meter's name). */
export const METER_NAME = '@stepfold/otel';

/**
 * Names of stepfold's metric instruments. A Prometheus exporter writes them with `_` for `.` and,
 * for counters, a `_total` suffix (`stepfold.workflows.started` → `stepfold_workflows_started_total`).
 */
export const METRIC = {
  /** Counter: instances started, by workflow (a start that found its id taken counts nothing). */
  workflowsStarted: 'stepfold.workflows.started',
  /** Counter: instances that ended `completed`, by workflow. */
  workflowsCompleted: 'stepfold.workflows.completed',
  /** Counter: instances that ended `failed`, by workflow. */
  workflowsFailed: 'stepfold.workflows.failed',
  /** Counter: instances that ended `cancelled` or `aborted`, by workflow and status. */
  workflowsCancelled: 'stepfold.workflows.cancelled',
  /** Counter: handler attempts, by workflow, step, phase and outcome. */
  taskAttempts: 'stepfold.task.attempts',
  /** Histogram (seconds): how long each handler attempt took, by workflow, step, phase and outcome. */
  taskDuration: 'stepfold.task.duration',
  /** Observable counter: a runner's successful writes (creates and saves). */
  writes: 'stepfold.writes',
  /** Observable counter: writes that lost a race to another writer, by what was written (`stepfold.race`). */
  writeConflicts: 'stepfold.write.conflicts',
  /** Counter: instances a worker took to tick, by lane (a workflow name, `*` for named ones and a single lane). */
  workerClaims: 'stepfold.worker.claims',
  /** Histogram (seconds): from an instance falling due to a worker's tick of it, by workflow. */
  workerLag: 'stepfold.worker.lag',
  /** Observable gauge: a worker's handler runs, by state (`running`, `queued`). */
  workerTasks: 'stepfold.worker.tasks',
  /** Observable gauge: instances due now and not claimed, by lane (workflow name); needs a `backlog` reader. */
  dueBacklog: 'stepfold.due.backlog',
  /** Observable gauge: holders of a flow-control key (running attempts, or starts in a rate window). */
  flowHolders: 'stepfold.flow.holders',
  /** Observable gauge: instances waiting for a flow-control key. */
  flowWaiters: 'stepfold.flow.waiters',
} as const;

/** Bucket boundaries (seconds) of the duration histograms: 5 ms to 10 min. */
export const DURATION_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
];
