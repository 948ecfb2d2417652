// `@stepfold/engine/conformance`: the store and payload store conformance suites. They register
// vitest tests, so they are their own entry: `@stepfold/engine` stays free of any test framework.
export type { Capability, Corrupt, OutageControl, StoreConformanceOptions } from './context.js';
export { fidelityPayload } from './crud.js';
export { type EncryptionConformanceOptions, runEncryptionConformance } from './encryption.js';
export {
  jsonOfBytes,
  type PayloadOutageControl,
  type PayloadStoreConformanceOptions,
} from './payload-context.js';
export { runPayloadStoreConformance } from './run-payload-store-conformance.js';
export { runStoreConformance } from './run-store-conformance.js';
