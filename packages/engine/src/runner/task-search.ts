import { readPath } from '../definition/data-path.js';
import type { WorkflowDefinition } from '../definition/schema.js';
import { type Issue, ValidationError } from '../errors.js';
import { type SearchValue, searchValueProblem } from '../search.js';

// The runner's side of search attributes: what a handler sets is checked when it sets it (so the
// handler gets the error), and what a step's output feeds is checked before its result is written.

/** `values` checked against the workflow's declarations: `INVALID_SEARCH_ATTRIBUTE` unless each is declared without `from` and of its type. */
export function checkedAttributes(
  definition: WorkflowDefinition,
  values: Readonly<Record<string, SearchValue | null>>,
): Record<string, SearchValue | null> {
  const declared = definition.search ?? {};
  const issues: Issue[] = [];
  const out: Record<string, SearchValue | null> = {};
  if (typeof values !== 'object' || values === null)
    issues.push({ path: '', message: 'must be an object of attribute values by name' });
  else
    for (const name of Object.keys(values)) {
      const a = Object.hasOwn(declared, name) ? declared[name] : undefined;
      const v = values[name];
      const problem =
        a === undefined
          ? `is not declared by workflow ${definition.name}`
          : a.from !== undefined
            ? `is read from ${a.from}, not set by handlers`
            : v === null
              ? undefined
              : searchValueProblem(a.type, v);
      if (problem) issues.push({ path: name, message: problem });
      else out[name] = v ?? null;
    }
  if (issues.length)
    throw new ValidationError('INVALID_SEARCH_ATTRIBUTE', 'ctx.setAttributes refused', issues);
  return out;
}

/** Problems with the attributes read from `step`'s output, were it `output` (empty when fine). */
export function outputSearchIssues(definition: WorkflowDefinition, step: string, output: unknown): string[] {
  const declared = definition.search;
  if (declared === undefined) return [];
  const out: string[] = [];
  const prefix = `outputs.${step}`;
  for (const name in declared) {
    const from = declared[name]!.from;
    if (from !== prefix && !from?.startsWith(`${prefix}.`)) continue;
    const v = readPath({ outputs: { [step]: output } }, from);
    const problem = v === undefined || v === null ? undefined : searchValueProblem(declared[name]!.type, v);
    if (problem) out.push(`${name} (${from}) ${problem}`);
  }
  return out;
}
