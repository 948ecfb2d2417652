// `@stepfold/asl`: AWS Step Functions state machines (Amazon States Language, JSONPath and JSONata) as
// stepfold workflows. `fromAsl` makes the definitions, `aslHandlers` the handler that evaluates
// each state. The conformance runner is the `@stepfold/asl/conformance` entry (it reads files).

export { LAMBDA_INVOKE } from './checks.js';
export { CHOICE_OPERATORS } from './choice-rules.js';
export { AslImportError, type AslImportReason, AslRuntimeError } from './errors.js';
export { type AslImport, type FromAslOptions, fromAsl } from './from-asl.js';
export { type AslContext, type AslHandlerOptions, aslHandlers } from './handler.js';
export { type AslHistoryEvent, type AslHistoryOptions, aslChildren, toAslHistory } from './history.js';
export { type HashFunction, INTRINSICS } from './intrinsics.js';
export { functionNameOf, type LambdaCall, type LambdaFunction, type ResourceMap } from './lambda.js';
export {
  ASL_HANDLER,
  type AslMachine,
  type AslPlan,
  type AslScope,
  type AslState,
  type QueryLanguage,
  type StepPlan,
} from './plan.js';
export { aslProblems } from './problems.js';
export type { StateOutput } from './state-output.js';
export { type AslEvent, type AslHistory, type AslStateIO, AslTrace, type AslTraceEntry } from './trace.js';
