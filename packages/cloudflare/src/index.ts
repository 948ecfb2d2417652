/**
 * stepfold on Cloudflare Workers: one Durable Object per workflow instance (its storage holds the
 * snapshot, its alarm is `wakeAt`) and a Worker `fetch` that routes the HTTP API to it.
 */
export {
  alarmFor,
  createDurableObjectStore,
  DO_MAX_SNAPSHOT_BYTES,
  type DurableObjectStore,
  type DurableObjectStoreOptions,
  SNAPSHOT_KEY,
} from './do-store.js';
export {
  createDurableFlowStore,
  DEFAULT_FLOW_OBJECT,
  type DurableFlowStoreOptions,
  durableFlowDriver,
  FlowObject,
  sqliteFlow,
} from './flow-object.js';
export { errorResponse, HttpError, jsonResponse, parseRoute, type Route } from './http-api.js';
export type {
  DurableNamespace,
  DurableState,
  DurableStorage,
  DurableStub,
  SqlDurableState,
  SqlDurableStorage,
  SqlStorage,
  StorageTransaction,
} from './platform.js';
export {
  createWorkflowHandler,
  type WorkflowHandler,
  type WorkflowHandlerOptions,
} from './worker-handler.js';
export {
  type AlarmFailure,
  createWorkflowObject,
  MAX_ALARM_BACKOFF_MS,
  WorkflowObject,
  type WorkflowObjectClass,
  type WorkflowObjectOptions,
} from './workflow-object.js';
