export {
  fleetFromEnv,
  type RunWorkersOptions,
  runWorkers,
  type WorkerProcessEvents,
  type WorkerProcesses,
} from './run-workers.js';
export { type MetricsServer, type ServeMetricsOptions, serveMetrics } from './serve-metrics.js';
export { type ServeWorkerOptions, serveWorker } from './serve-worker.js';
