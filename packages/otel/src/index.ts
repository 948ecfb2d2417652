export { GEN_AI_ATTR, type GenAiOptions, genAiHandlers } from './gen-ai.js';
export {
  ATTR,
  createOtelInstrumentation,
  type OtelInstrumentationOptions,
  THROTTLED_EVENT,
  TRACER_NAME,
} from './otel-instrumentation.js';
export { traceContextPropagator } from './trace-context.js';
