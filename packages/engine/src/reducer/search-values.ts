import type { CompiledWorkflow } from '../definition/compile.js';
import { readPath } from '../definition/data-path.js';
import { type Issue, ValidationError } from '../errors.js';
import { isSearchValues, type SearchValue, searchValueProblem, setIssues } from '../search.js';
import type { Snapshot } from '../snapshot.js';
import { dataView } from './transition-context.js';

/**
 * Brings `next.search` up to date after an event: the values a handler set (`set`, from its result
 * event; `null` clears one), then every attribute read from a data path, read again from the new
 * data (absent or `null` there: no value). A name that is not declared (or is read from a path), or
 * a value of the wrong type, throws `INVALID_SEARCH_ATTRIBUTE` and nothing is written (a `search`
 * that is not attribute values, from a snapshot from outside: `INVALID_SNAPSHOT`). The old object
 * is kept when nothing changed, so a write that changes no attribute changes no index entry.
 */
export function updateSearch(
  wf: CompiledWorkflow,
  next: Snapshot,
  set?: Readonly<Record<string, SearchValue | null>>,
): void {
  const declared = wf.definition.search;
  if (declared === undefined) return;
  const prev = next.search;
  // What a snapshot from outside carried: the core copies it as it is.
  if (prev !== undefined && !isSearchValues(prev))
    throw new ValidationError('INVALID_SNAPSHOT', 'invalid snapshot', [
      { path: 'search', message: 'must be an object of search attribute values' },
    ]);
  const out: Record<string, SearchValue> = { ...prev };
  // The event's parse takes any value here: its shape is checked with its names and types.
  const issues: Issue[] =
    set === undefined
      ? []
      : typeof set === 'object' && set !== null && !Array.isArray(set)
        ? setIssues(declared, set)
        : [{ path: 'search', message: 'must be an object of attribute values by name' }];
  if (set && !issues.length)
    for (const name of Object.keys(set)) {
      const v = set[name];
      if (v === null || v === undefined) delete out[name];
      else out[name] = v;
    }
  let view: ReturnType<typeof dataView> | undefined;
  for (const name in declared) {
    const a = declared[name]!;
    if (a.from === undefined) continue;
    view ??= dataView(next);
    const v = readPath(view, a.from);
    if (v === undefined || v === null) {
      delete out[name];
      continue;
    }
    const problem = searchValueProblem(a.type, v);
    if (problem) issues.push({ path: `search.${name}`, message: `${a.from} ${problem}` });
    else out[name] = v as SearchValue;
  }
  if (issues.length)
    throw new ValidationError(
      'INVALID_SEARCH_ATTRIBUTE',
      `instance ${next.id}: bad search attribute`,
      issues,
    );
  const names = Object.keys(out);
  if (names.length === 0) delete next.search;
  else if (!prev || names.length !== Object.keys(prev).length || names.some((n) => prev[n] !== out[n]))
    next.search = Object.freeze(out);
}
