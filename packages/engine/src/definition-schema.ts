import { z } from 'zod';
import { isValidId } from './ids.js';

const stepId = z.string().refine(isValidId, 'must be 1-200 characters of A-Z a-z 0-9 _ . : @ / + = -');
const pathString = z.string().min(1).max(500);
const ms = z
  .number()
  .int()
  .min(0)
  .max(10 * 365 * 24 * 3600 * 1000);

/** Retry policy (SPEC §2); omitted fields take the workflow's or the built-in defaults. */
export const retryPolicySchema = z.strictObject({
  maxAttempts: z.number().int().min(1).max(10_000).optional(),
  initialMs: ms.optional(),
  factor: z.number().min(1).max(100).optional(),
  maxMs: ms.optional(),
  jitter: z.number().min(0).max(1).optional(),
  nonRetryable: z.array(z.string().min(1)).optional(),
});

/** What happens when a step fails for good. */
export const failurePolicySchema = z.enum(['compensate', 'dlq', 'fail']);

/** Where a handler's input comes from: one data path, or an object of named paths. */
export const inputMappingSchema = z.union([
  pathString,
  z.record(
    z.string().refine((k) => k !== '__proto__', 'reserved key'),
    pathString,
  ),
]);

/** A condition: JSON-Logic-like data, checked by `conditionIssues` and never evaluated as code. */
export const conditionSchema = z.custom<Condition>((v) => typeof v === 'object' && v !== null);

/** A safe predicate over workflow data (see `condition.ts` for the operators). */
export type Condition =
  | { var: string }
  | { '==': [Operand, Operand] }
  | { '!=': [Operand, Operand] }
  | { '<': [Operand, Operand] }
  | { '<=': [Operand, Operand] }
  | { '>': [Operand, Operand] }
  | { '>=': [Operand, Operand] }
  | { in: [Operand, Operand] }
  | { and: Condition[] }
  | { or: Condition[] }
  | { '!': Condition }
  | { exists: string };

/** A literal JSON value or a `{ var: path }` reference. */
export type Operand =
  | string
  | number
  | boolean
  | null
  | { var: string }
  | Array<string | number | boolean | null>;

const base = { id: stepId.optional(), next: stepId.optional(), description: z.string().max(2000).optional() };

const taskStep = z.strictObject({
  ...base,
  kind: z.literal('task'),
  handler: stepId,
  input: inputMappingSchema.optional(),
  retry: retryPolicySchema.optional(),
  timeoutMs: ms.min(1).optional(),
  compensate: stepId.optional(),
  compensateOnFailure: z.boolean().optional(),
  pivot: z.boolean().optional(),
  onFailure: failurePolicySchema.optional(),
});
const choiceStep = z.strictObject({
  id: base.id,
  description: base.description,
  kind: z.literal('choice'),
  branches: z.array(z.strictObject({ when: conditionSchema, next: stepId })).min(1),
  otherwise: stepId.optional(),
});
const parallelStep = z.strictObject({
  ...base,
  kind: z.literal('parallel'),
  branches: z.array(stepId).min(1),
  join: z
    .union([z.literal('all'), z.literal('any'), z.strictObject({ atLeast: z.number().int().min(1) })])
    .optional(),
});
const waitStep = z.strictObject({
  ...base,
  kind: z.literal('wait'),
  signal: stepId,
  timeoutMs: ms.min(1).optional(),
  onTimeout: stepId.optional(),
});
const humanStep = z.strictObject({
  ...base,
  kind: z.literal('human'),
  signal: stepId.optional(),
  timeoutMs: ms.min(1).optional(),
  onTimeout: stepId.optional(),
});
const sleepStep = z.strictObject({
  ...base,
  kind: z.literal('sleep'),
  ms: ms.optional(),
  until: pathString.optional(),
});
const collectStep = z.strictObject({
  ...base,
  kind: z.literal('collect'),
  signal: stepId,
  maxItems: z.number().int().min(1).max(10_000).optional(),
  idleMs: ms.min(1).optional(),
  maxWaitMs: ms.min(1).optional(),
  dedupeBy: pathString.optional(),
});
const savepointStep = z.strictObject({ ...base, kind: z.literal('savepoint') });
const continueAsNewStep = z.strictObject({
  id: base.id,
  description: base.description,
  kind: z.literal('continueAsNew'),
  carry: inputMappingSchema.optional(),
});
const succeedStep = z.strictObject({
  id: base.id,
  description: base.description,
  kind: z.literal('succeed'),
  output: inputMappingSchema.optional(),
});
const failStep = z.strictObject({
  id: base.id,
  description: base.description,
  kind: z.literal('fail'),
  error: z.strictObject({ message: z.string().min(1), code: z.string().optional() }).optional(),
});

/** One step of a definition, discriminated by `kind`. */
export const stepSchema = z.discriminatedUnion('kind', [
  taskStep,
  choiceStep,
  parallelStep,
  waitStep,
  humanStep,
  sleepStep,
  collectStep,
  savepointStep,
  continueAsNewStep,
  succeedStep,
  failStep,
]);

/** The JSON form of a workflow definition (SPEC §2). `steps` may also be given as an array with ids. */
export const definitionSchema = z.strictObject({
  name: stepId,
  version: z.number().int().min(1),
  start: stepId,
  description: z.string().max(2000).optional(),
  steps: z.union([z.record(z.string(), stepSchema), z.array(stepSchema)]),
  onFailure: failurePolicySchema.optional(),
  defaults: z
    .strictObject({ retry: retryPolicySchema.optional(), timeoutMs: ms.min(1).optional() })
    .optional(),
  limits: z
    .strictObject({
      inbox: z.number().int().min(1).max(100_000).optional(),
      log: z.number().int().min(0).max(10_000).optional(),
    })
    .optional(),
});

/** Retry policy as written in a definition. */
export type RetryPolicyInput = z.infer<typeof retryPolicySchema>;
/** Failure policy: `compensate` (default), `dlq` or `fail`. */
export type FailurePolicy = z.infer<typeof failurePolicySchema>;
/** A step as written in a definition. */
export type StepDefinition = z.infer<typeof stepSchema>;
/** Step kinds. */
export type StepKind = StepDefinition['kind'];
/** A step of the given kind. */
export type StepOf<K extends StepKind> = Extract<StepDefinition, { kind: K }>;
/** A definition as accepted by `defineWorkflow` (steps as a record or an array). */
export type DefinitionInput = z.input<typeof definitionSchema>;
/** A validated definition in its normal form: steps keyed by id, each carrying its id. */
export interface WorkflowDefinition extends Omit<z.infer<typeof definitionSchema>, 'steps'> {
  steps: Record<string, StepDefinition & { id: string }>;
}
