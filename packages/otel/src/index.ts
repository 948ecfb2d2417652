export {
  ATTR,
  createOtelInstrumentation,
  type OtelInstrumentationOptions,
  TRACER_NAME,
} from './otel-instrumentation.js';
export { traceContextPropagator } from './trace-context.js';
