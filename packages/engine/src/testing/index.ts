export type { OutageControl, StoreConformanceOptions } from './conformance/context.js';
export { canonicalJson } from './conformance/context.js';
export { fidelityPayload } from './conformance/crud.js';
export {
  createHarness,
  type DispatchedTask,
  type EventInput,
  type HarnessOptions,
  type SyncHandlers,
  WorkflowHarness,
} from './harness.js';
export { runStoreConformance } from './store-conformance.js';
export { makeTestSnapshot, snapshotOfSize } from './test-snapshot.js';
