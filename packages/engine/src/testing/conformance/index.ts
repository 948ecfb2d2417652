// `@stepfold/engine/conformance`: the store conformance suite. It registers vitest tests, so it
// is its own entry: `@stepfold/engine/testing` stays free of any test framework.
export type { Capability, OutageControl, StoreConformanceOptions } from './context.js';
export { fidelityPayload } from './crud.js';
export { runStoreConformance } from './run-store-conformance.js';
