export { WorkflowBuilder, type WorkflowOptions, workflow } from './builder.js';
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
} from './definition-schema.js';
export { definitionSchema } from './definition-schema.js';
export * from './errors.js';
export { type EventOf, eventSchema, parseEvent, type WorkflowEvent } from './events.js';
export type { RunnerHooks } from './hooks.js';
export { assertValidId, isValidId, MAX_ID_LENGTH } from './ids.js';
export { createMemoryStore, type MemoryStore, type MemoryStoreOptions } from './memory-store.js';
export { replay, type StepOptions, step } from './reducer.js';
export { backoffMs, DEFAULT_RETRY, DEFAULT_TIMEOUT_MS, type RetryPolicy } from './retry-policy.js';
export {
  createRunner,
  type HandleResult,
  type Handler,
  type HandlerContext,
  type Runner,
  type RunnerMessage,
  type RunnerOptions,
  type StartOptions,
  TaskError,
} from './runner.js';
export * from './snapshot.js';
export { type ListPage, type ListQuery, type Store, snapshotBytes } from './store.js';
export { dispatchedBy, type TaskView, taskView } from './task-input.js';
export { defineWorkflow, definitionHash } from './workflow.js';
