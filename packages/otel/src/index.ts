export { GEN_AI_ATTR, type GenAiOptions, genAiHandlers } from './gen-ai.js';
export { DURATION_BUCKETS, METER_NAME, METRIC } from './metric-names.js';
export type { DueBacklog, MetricsObservation, ObserveTarget } from './metric-observers.js';
export {
  ATTR,
  createOtelInstrumentation,
  type OtelInstrumentationOptions,
  THROTTLED_EVENT,
  TRACER_NAME,
} from './otel-instrumentation.js';
export { createOtelMetrics, type OtelMetrics, type OtelMetricsOptions } from './otel-metrics.js';
export { traceContextPropagator } from './trace-context.js';
