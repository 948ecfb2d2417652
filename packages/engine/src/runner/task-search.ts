import { readPath } from '../definition/data-path.js';
import type { WorkflowDefinition } from '../definition/schema.js';
import { ValidationError } from '../errors.js';
import { type SearchValue, searchValueProblem, setIssues } from '../search.js';

// The runner's side of search attributes: what a handler sets is checked when it sets it (so the
// handler gets the error), and what a step's output feeds is checked before its result is written.

/** `values` checked against the workflow's declarations: `INVALID_SEARCH_ATTRIBUTE` unless each is declared without `from` and of its type. */
export function checkedAttributes(
  definition: WorkflowDefinition,
  values: Readonly<Record<string, SearchValue | null>>,
): Record<string, SearchValue | null> {
  const issues =
    typeof values === 'object' && values !== null
      ? setIssues(definition.search ?? {}, values)
      : [{ path: '', message: 'must be an object of attribute values by name' }];
  if (issues.length)
    throw new ValidationError('INVALID_SEARCH_ATTRIBUTE', 'ctx.setAttributes refused', issues);
  return { ...values };
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
