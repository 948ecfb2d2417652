import { conditionIssues, conditionPaths, evaluateCondition } from '../definition/condition.js';
import { type Trigger, triggersOf } from '../definition/triggers.js';

// A definition's triggers, checked and matched: the event's data is the run's input, so a filter
// reads `input.` paths (typed, in the builder, by the declared input).

/** Every problem with the filters of `on`: a malformed condition, or a path outside `input` (all a start knows). */
export function triggerIssues(
  on: Trigger | readonly Trigger[] | undefined,
): Array<{ path: string; message: string }> {
  const out: Array<{ path: string; message: string }> = [];
  triggersOf(on).forEach((t, i) => {
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
