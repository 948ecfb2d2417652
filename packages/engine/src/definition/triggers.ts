import * as z from '../mini-schema.js';
import { idString } from '../schema-kit.js';
import { type Condition, conditionSchema } from './step-fields.js';

// Event triggers as written: a workflow names the events that start it (`on`), each with an
// optional filter in the condition language. `on` parses anywhere; its filters are checked, and
// events matched, by the `eventTriggers` value (triggers/), where a runner is given it.

/** One event a workflow starts on: its name, and a condition on the event's data (read as `input`). */
export const triggerSchema = z.strictObject({ event: idString, filter: z.optional(conditionSchema) });

/** The `on` field of a definition: one trigger or several. */
export const triggersField = z.union([triggerSchema, z.array(triggerSchema)]);

/** An event a workflow starts on (see `Runner.publish`). */
export interface Trigger {
  /** The event's name (1-200 characters of A-Z a-z 0-9 _ . : @ / + = -). */
  event: string;
  /** Only events whose data passes this condition (over `input`, the event's data) start a run. */
  filter?: Condition | undefined;
}

/** The triggers of a definition's `on`, as a list. */
export function triggersOf(on: Trigger | readonly Trigger[] | undefined): readonly Trigger[] {
  return on === undefined ? [] : Array.isArray(on) ? on : [on as Trigger];
}
