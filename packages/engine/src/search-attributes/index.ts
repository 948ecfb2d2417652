import type { CompiledWorkflow } from '../definition/compile.js';
import { ValidationError } from '../errors.js';
import type { SearchRules } from '../reducer/kinds/step-rules.js';
import { updateSearch } from '../reducer/search-values.js';
import type { RunnerKindSet } from '../runner/child-port.js';
import type { RunTask } from '../runner/execute-task.js';
import { checkedAttributes, searchTask } from '../runner/task-search.js';
import { searchDeclarationIssues } from '../search.js';

// `@stepfold/engine`: search attributes as a value. A definition's `search` parses anywhere;
// checking the declarations, keeping `Snapshot.search` after every event and checking what
// handlers set come with this value, and only the calls it is passed to run them.

/** The kind set of search attributes, as {@link searchAttributes} is typed: no step kind, their rules. */
export interface SearchAttributes extends RunnerKindSet {
  readonly name: 'searchAttributes';
  readonly search: SearchRules;
  readonly taskWrapper: (run: RunTask) => RunTask;
}

/** A definition's declarations checked past their shape: INVALID_DEFINITION naming each problem. */
function checkDeclarations(wf: CompiledWorkflow): void {
  const issues = searchDeclarationIssues(wf.definition.search, wf.definition.steps);
  if (issues.length) throw new ValidationError('INVALID_DEFINITION', 'invalid workflow definition', issues);
}

/**
 * Search attributes (a workflow's `.search(name, { type, from })`, `ctx.setAttributes`), for the
 * `kinds` option of `createRunner`, `step` and `createHarness`. A definition that declares any runs
 * only where it is passed; stores list by them (`store.list({ where, orderBy })`) either way.
 *
 * @example
 * import { createRunner, searchAttributes } from '@stepfold/engine';
 * const runner = createRunner({ store, workflows: [order], handlers, kinds: [searchAttributes] });
 * await store.list({ limit: 50, where: { customerId: 'c-42', status: 'waiting' } });
 */
export const searchAttributes: SearchAttributes = Object.freeze({
  name: 'searchAttributes',
  rules: {},
  search: Object.freeze({
    check: checkDeclarations,
    update: updateSearch,
    set: checkedAttributes,
  }),
  taskWrapper: searchTask,
});
