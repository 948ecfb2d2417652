export {
  createHarness,
  type DispatchedTask,
  type EventInput,
  type HarnessOptions,
  type SyncHandlers,
  WorkflowHarness,
} from './harness.js';
