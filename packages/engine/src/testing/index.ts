// `@stepfold/engine`: the harness and fixtures. Imports no test framework, so it works
// under vitest, Jest, node:test or Bun. The store conformance suite is `@stepfold/engine/conformance`.
export { canonicalJson } from '../content-hash.js';
export {
  type AwaitedSignal,
  type ChildEffect,
  createHarness,
  type DispatchedTask,
  type EventInput,
  type HarnessOptions,
  type HarnessRequeueOptions,
  type HarnessStartOptions,
  type StreamedChunk,
  type SyncHandlers,
  WorkflowHarness,
} from './harness.js';
export { makeTestSnapshot, snapshotOfSize } from './test-snapshot.js';
