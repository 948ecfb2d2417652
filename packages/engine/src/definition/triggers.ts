import * as z from 'zod/mini';
import { idString } from '../schema-kit.js';
import { conditionIssues, conditionPaths, evaluateCondition } from './condition.js';
import { type Condition, conditionSchema } from './step-fields.js';

// Event triggers: a workflow names the events that start it (`on`), each with an optional filter in
// the condition language. The event's data is the run's input, so a filter reads `input.` paths and
// is typed, in the builder, against the declared input.

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

/** Every problem with the filters of `on`: a malformed condition, or a path outside `input` (all a start knows). */
export function triggerIssues(
  on: Trigger | readonly Trigger[] | undefined,
): Array<{ path: string; message: string }> {
  const list = triggersOf(on);
  const out: Array<{ path: string; message: string }> = [];
  list.forEach((t, i) => {
    if (t.filter === undefined) return;
    const at = Array.isArray(on) ? `on.${i}.filter` : 'on.filter';
    const issues = conditionIssues(t.filter, at);
    out.push(...issues);
    if (issues.length) return;
    for (const p of conditionPaths(t.filter, at))
      if (p.path !== 'input' && !p.path.startsWith('input.'))
        out.push({
          path: p.at,
          message: `a trigger's filter reads the event's data as input: "${p.path}" must start with input`,
        });
  });
  return out;
}

/** Whether an event named `name` with `data` starts a run of a workflow with these triggers. */
export function triggered(
  on: Trigger | readonly Trigger[] | undefined,
  name: string,
  data: unknown,
): boolean {
  return triggersOf(on).some(
    (t) => t.event === name && (t.filter === undefined || evaluateCondition(t.filter, { input: data })),
  );
}
