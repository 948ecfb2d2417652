import * as z from '../mini-schema.js';
import { integer, millis, idString as stepId, text } from '../schema-kit.js';
import type { SearchAttribute } from '../search.js';
import { limitField } from './flow-limits.js';
import { type StepDefinition, stepSchema } from './kinds/index.js';
import { failurePolicySchema, retryPolicySchema } from './step-fields.js';
import { triggersField } from './triggers.js';

export { type StepDefinition, type StepKind, type StepOf, stepSchema } from './kinds/index.js';
export {
  type Condition,
  conditionSchema,
  failurePolicySchema,
  inputMappingSchema,
  type Operand,
  retryPolicySchema,
} from './step-fields.js';

const opt = z.optional;
const header = {
  name: stepId,
  version: integer(1, 1_000_000),
  start: stepId,
  description: opt(text(0, 2000)),
  onFailure: opt(failurePolicySchema),
  defaults: opt(z.strictObject({ retry: opt(retryPolicySchema), timeoutMs: opt(millis(1)) })),
  /**
   * Buffer signals whose name no step listens for (default false: such a signal is refused with
   * `UNKNOWN_SIGNAL`). For instances that will be moved to a version that listens.
   */
  acceptUnknownSignals: opt(z.boolean()),
  limits: opt(
    z.strictObject({
      inbox: opt(integer(1, 100_000)),
      log: opt(integer(0, 10_000)),
      signalIds: opt(integer(0, 10_000)),
    }),
  ),
  /** At most `limit` instances per key value (an `input.` path) admitted at once, across runners. */
  concurrency: opt(limitField),
  /** The instance's priority (an integer from 0 to 1000, higher first, or an `input.` path to one): checked and acted on by `flowControl`. */
  priority: opt(limitField as unknown as z.Schema<number | string>),
  /** Reserved: round-robin across the values of `key` (an `input.` path). Checked by `flowControl`, not yet acted on. */
  fairness: opt(limitField as unknown as z.Schema<{ key: string }>),
  /** Search attributes by name: `{ type, from? }`; checked by `searchAttributes`, without which a definition that has them does not run. */
  search: opt(z.unknown() as z.Schema<Record<string, SearchAttribute>>),
  /** The events that start a run (`runner.publish`): a name, and a filter over the event's data as `input`. */
  on: opt(triggersField),
};

/** The JSON form of a workflow definition. `steps` may be a record keyed by id or a list of steps with ids. */
export const definitionSchema = z.strictObject({
  ...header,
  // Steps by id: an object whose every key is a step (not a record schema: smaller).
  steps: z.union([z.catchall(z.object({}), stepSchema), z.array(stepSchema)]),
});

/** The definition without its steps, so each step can be checked on its own with precise paths. */
export const definitionHeaderSchema = z.strictObject({
  ...header,
  steps: z.custom<unknown>(
    (v) => typeof v === 'object' && v !== null,
    'must be an object of steps or a list of steps',
  ),
});

/** Retry policy as written in a definition. */
export type RetryPolicyInput = z.infer<typeof retryPolicySchema>;
/** Failure policy: `compensate` (default), `dlq` or `fail`. */
export type FailurePolicy = z.infer<typeof failurePolicySchema>;
/** A definition as accepted by `defineWorkflow` (steps as a record or an array). */
export type DefinitionInput = z.input<typeof definitionSchema>;
/** A validated definition in its normal form: steps keyed by id, each carrying its id. */
export interface WorkflowDefinition extends Omit<z.infer<typeof definitionSchema>, 'steps'> {
  steps: Record<string, StepDefinition & { id: string }>;
}
