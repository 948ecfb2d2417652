import * as z from 'zod/mini';
import { bounded, integer, millis, idString as stepId, text } from '../schema-kit.js';

const pathString = text(1, 500);
const opt = z.optional;

/** Retry policy (SPEC §2); omitted fields take the workflow's or the built-in defaults. */
export const retryPolicySchema = z.strictObject({
  maxAttempts: opt(integer(1, 10_000)),
  initialMs: opt(millis()),
  factor: opt(bounded(1, 100)),
  maxMs: opt(millis()),
  jitter: opt(bounded(0, 1)),
  nonRetryable: opt(z.array(text(1, 200))),
});

/** What happens when a step fails for good. */
export const failurePolicySchema = z.enum(['compensate', 'dlq', 'fail']);

/** Where a handler's input comes from: one data path, or an object of named paths. */
export const inputMappingSchema = z.union([
  pathString,
  z.record(z.string().check(z.refine((k) => k !== '__proto__', 'reserved key')), pathString),
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

const base = { id: opt(stepId), next: opt(stepId), description: opt(text(0, 2000)) };
const terminalBase = { id: base.id, description: base.description };

const taskStep = z.strictObject({
  ...base,
  kind: z.literal('task'),
  handler: stepId,
  input: opt(inputMappingSchema),
  retry: opt(retryPolicySchema),
  timeoutMs: opt(millis(1)),
  compensate: opt(stepId),
  compensateOnFailure: opt(z.boolean()),
  pivot: opt(z.boolean()),
  onFailure: opt(failurePolicySchema),
});
const choiceStep = z.strictObject({
  ...terminalBase,
  kind: z.literal('choice'),
  branches: z.array(z.strictObject({ when: conditionSchema, next: stepId })).check(z.minLength(1)),
  otherwise: opt(stepId),
});
const parallelStep = z.strictObject({
  ...base,
  kind: z.literal('parallel'),
  branches: z.array(stepId).check(z.minLength(1)),
  join: opt(z.union([z.literal('all'), z.literal('any'), z.strictObject({ atLeast: integer(1, 10_000) })])),
});
const waitStep = z.strictObject({
  ...base,
  kind: z.literal('wait'),
  signal: stepId,
  timeoutMs: opt(millis(1)),
  onTimeout: opt(stepId),
});
const humanStep = z.strictObject({
  ...base,
  kind: z.literal('human'),
  signal: opt(stepId),
  timeoutMs: opt(millis(1)),
  onTimeout: opt(stepId),
});
const sleepStep = z.strictObject({
  ...base,
  kind: z.literal('sleep'),
  ms: opt(millis()),
  until: opt(pathString),
});
const collectStep = z.strictObject({
  ...base,
  kind: z.literal('collect'),
  signal: stepId,
  maxItems: opt(integer(1, 10_000)),
  idleMs: opt(millis(1)),
  maxWaitMs: opt(millis(1)),
  dedupeBy: opt(pathString),
});
const savepointStep = z.strictObject({ ...base, kind: z.literal('savepoint') });
const continueAsNewStep = z.strictObject({
  ...terminalBase,
  kind: z.literal('continueAsNew'),
  carry: opt(inputMappingSchema),
});
const succeedStep = z.strictObject({
  ...terminalBase,
  kind: z.literal('succeed'),
  output: opt(inputMappingSchema),
});
const failStep = z.strictObject({
  ...terminalBase,
  kind: z.literal('fail'),
  error: opt(z.strictObject({ message: text(1, 2000), code: opt(text(1, 200)) })),
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

const header = {
  name: stepId,
  version: integer(1, 1_000_000),
  start: stepId,
  description: opt(text(0, 2000)),
  onFailure: opt(failurePolicySchema),
  defaults: opt(z.strictObject({ retry: opt(retryPolicySchema), timeoutMs: opt(millis(1)) })),
  limits: opt(
    z.strictObject({
      inbox: opt(integer(1, 100_000)),
      log: opt(integer(0, 10_000)),
      signalIds: opt(integer(0, 10_000)),
    }),
  ),
};

/** The JSON form of a workflow definition (SPEC §2). `steps` may also be given as an array with ids. */
export const definitionSchema = z.strictObject({
  ...header,
  steps: z.union([z.record(z.string(), stepSchema), z.array(stepSchema)]),
});

/** The definition without its steps, so each step can be checked on its own with precise paths. */
export const definitionHeaderSchema = z.strictObject({
  ...header,
  steps: z.custom<unknown>(
    (v) => typeof v === 'object' && v !== null,
    'must be an object of steps or a list of steps',
  ),
});

/** Every step kind. */
export const STEP_KINDS: readonly string[] = [
  'task',
  'choice',
  'parallel',
  'wait',
  'human',
  'sleep',
  'collect',
  'savepoint',
  'continueAsNew',
  'succeed',
  'fail',
];

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
