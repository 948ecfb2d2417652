import { readPath } from '../definition/data-path.js';
import type { WorkflowDefinition } from '../definition/schema.js';
import { ValidationError } from '../errors.js';
import type { WorkflowEvent } from '../events.js';
import { type SearchValue, searchValueProblem, setIssues } from '../search.js';
import type { ErrorInfo } from '../snapshot.js';
import { type RunTask, resultEvent } from './execute-task.js';
import type { Handler, HandlerContext } from './handler-types.js';

// The runner's side of search attributes (`searchAttributes` brings it, as a wrapper of the
// runner's handler attempts): what a handler sets is checked when it sets it (so the handler gets
// the error), and what a step's output feeds is checked before its result is written.

/** `values` checked against the workflow's declarations: `INVALID_SEARCH_ATTRIBUTE` unless each is declared without `from` and of its type. */
export function checkedAttributes(
  definition: WorkflowDefinition,
  values: unknown,
): Record<string, SearchValue | null> {
  const issues =
    typeof values === 'object' && values !== null && !Array.isArray(values)
      ? setIssues(definition.search ?? {}, values as Record<string, unknown>)
      : [{ path: '', message: 'must be an object of attribute values by name' }];
  if (issues.length)
    throw new ValidationError('INVALID_SEARCH_ATTRIBUTE', 'ctx.setAttributes refused', issues);
  return { ...(values as Record<string, SearchValue | null>) };
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

/**
 * The failure of a step whose output feeds search attributes a value of another type, or
 * undefined: not retried, since the same handler would return the same shape again.
 */
export function outputSearchError(
  definition: WorkflowDefinition,
  step: string,
  output: unknown,
): ErrorInfo | undefined {
  const wrong = outputSearchIssues(definition, step, output);
  if (!wrong.length) return undefined;
  const message = `output of ${step} feeds search attributes of another type: ${wrong.join('; ')}`;
  return { message, code: 'INVALID_SEARCH_ATTRIBUTE', retryable: false };
}

/**
 * A runner's handler attempts with search attributes (`searchAttributes` brings it): each
 * context's `ctx.setAttributes` collects checked values, which ride on the completed result; an
 * output that feeds an attribute a value of another type fails the attempt instead.
 */
export function searchTask(run: RunTask): RunTask {
  return async (r) => {
    let set: Record<string, SearchValue | null> | undefined;
    const handler: Handler = (ctx) => {
      // An own property over the context's default, which refuses.
      (ctx as { setAttributes: HandlerContext['setAttributes'] }).setAttributes = (values) => {
        set = { ...set, ...checkedAttributes(r.definition, values) };
      };
      return r.handler(ctx);
    };
    const result = await run({ ...r, handler });
    if (result.outcome !== 'completed') return result;
    const { event } = result;
    // The event carries the output (round-tripped and schema-checked); its time is filled in later.
    const output = (event(0) as { output?: unknown }).output;
    const error = r.task.phase === 'run' ? outputSearchError(r.definition, r.task.step, output) : undefined;
    if (error) return { outcome: 'failed', error, event: resultEvent('task.failed', r.task, { error }) };
    if (!set) return result;
    const search = set;
    return { ...result, event: (at) => ({ ...event(at), search }) as WorkflowEvent };
  };
}
