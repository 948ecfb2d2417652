// What used to be separate entries: a bundler keeps only what a program imports
// ("sideEffects": false), so one entry costs an edge bundle nothing it does not use.
export * from './callbacks/index.js';
export * from './codec/index.js';
export * from './composition/index.js';
export {
  type TaskFields,
  WorkflowBuilder,
  type WorkflowLimit,
  type WorkflowOptions,
  workflow,
} from './definition/builder.js';
export type { ChildWorkflow, MapSummary, WorkflowMapSummary } from './definition/builder-compose.js';
export type { KeyPath, TypedFlowLimit, TypedRateLimit } from './definition/builder-types.js';
export { defineWorkflow, definitionHash } from './definition/compile.js';
export { readPath } from './definition/data-path.js';
export { type DeclaredSchemas, declaredSchemas, type } from './definition/declared-schemas.js';
export type { FlowLimit, RateLimit } from './definition/flow-limits.js';
export * from './definition/introspect.js';
export type {
  Condition,
  DefinitionInput,
  FailurePolicy,
  Operand,
  RetryPolicyInput,
  StepDefinition,
  StepKind,
  StepOf,
  WorkflowDefinition,
} from './definition/schema.js';
export { definitionSchema } from './definition/schema.js';
export type { Trigger } from './definition/triggers.js';
export type {
  ChildrenOf,
  ChildStep,
  ChildStepsOf,
  DefinitionTypes,
  HandlerSpec,
  HandlerSpecsOf,
  HumanDecision,
  InputOf,
  KindsOf,
  NameOf,
  OutputOf,
  SignalsOf,
  StepIdOf,
  StepOutputsOf,
  TaskOutputsOf,
  TaskStepIdOf,
  TypedDefinition,
  VersionOf,
} from './definition/typed-definition.js';
export type {
  DataPath,
  InferSchema,
  Jsonify,
  PathValue,
  Resolve,
  SchemaResult,
  StandardSchema,
  TypedCondition,
  TypedOperand,
} from './definition/typing.js';
export * from './diagram/index.js';
export * from './errors.js';
export { type EventOf, eventSchema, parseEvent, type WorkflowEvent } from './events.js';
export * from './flow-control/index.js';
export { flowCounters, flowHolders, instanceHolder, taskHolder } from './flow-holders.js';
export { assertValidId, isValidId, MAX_ID_LENGTH } from './ids.js';
export * from './lifecycle/index.js';
export * from './payloads/index.js';
export type { KindSet } from './reducer/kind-table.js';
export { replay, type StepOptions, step } from './reducer/reducer.js';
export { backoffMs, DEFAULT_RETRY, DEFAULT_TIMEOUT_MS, type RetryPolicy } from './reducer/retry-policy.js';
export { HEARTBEAT_DETAILS_MAX_BYTES } from './reducer/task-heartbeat.js';
export { attemptOverdue, DEFAULT_TASK_LEASE_MS } from './reducer/task-lease.js';
export { dispatchedBy, type TaskView, taskView } from './reducer/task-view.js';
export type { CallbackOptions, CallbackPort, CheckedCallback } from './runner/callback-port.js';
export { type FlowChanges, flowChanges } from './runner/flow-changes.js';
export { handlerHeartbeats, type RunnerHeartbeats } from './runner/handler-heartbeats.js';
export type { AnyDefinition, Handler, HandlerContext, HandlersFor } from './runner/handler-types.js';
export { type DefinedHooks, defineHooks, type RunnerHooks } from './runner/hooks.js';
export {
  type HttpRoute,
  type HttpRouteMiss,
  type HttpRouteOptions,
  isHttpRoute,
  parseHttpRoute,
} from './runner/http-routes.js';
export type {
  EventInfo,
  EventOutcome,
  Instrumentation,
  TaskInfo,
  TaskOutcome,
  WorkflowRef,
} from './runner/instrumentation.js';
export type { TaskJob } from './runner/port.js';
export { createRunner } from './runner/runner.js';
export type { HandlerStream } from './runner/task-stream.js';
export { defineInstrumentation, type RunnerInstrumentation, type TracedOperations } from './runner/traced.js';
export type {
  CallOptions,
  HandleResult,
  InputPatchOf,
  PublishedEvent,
  PublishResult,
  Runner,
  RunnerCoreOptions,
  RunnerMessage,
  RunnerOptions,
  RunnerStats,
  SendOptions,
  SendResult,
  SignalDataOf,
  SignalNameOf,
  SignalOptions,
  StartOptions,
  TriggeredRun,
  TypedSnapshot,
  WorkflowClient,
  WorkflowNameOf,
} from './runner/types.js';
export * from './search.js';
export * from './search-attributes/index.js';
export * from './snapshot.js';
export * from './store/index.js';
export * from './store/memory-store.js';
export {
  type ClaimQuery,
  type CreateOptions,
  type DeleteOptions,
  type DueClaims,
  type DueQuery,
  type Inbox,
  type InboxSendOutcome,
  type ListPage,
  type ListQuery,
  type SaveOptions,
  SENT_CLAIM_AFTER_MS,
  type SentDue,
  type SentSignal,
  type Store,
  snapshotBytes,
  type Unreadable,
  type WakeListener,
  type WakeNotice,
  type WakeSource,
  type WakeSubscription,
} from './store/store.js';
export * from './testing/index.js';
export { isUsageTotal, tokenUsage, type UsageTotal } from './token-usage.js';
export { type EventTriggers, eventTriggers } from './triggers/index.js';
export { triggeredRunId } from './triggers/publish.js';
export * from './worker/index.js';
