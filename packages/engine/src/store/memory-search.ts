import type { SearchValue } from '../search.js';
import type { ListSearch } from './store-kit.js';

// The in-memory store's search index: per attribute name, per value, the ids of the instances that
// hold it, kept by every insert, update and remove. An equality or `in` on an attribute reads the
// ids of its values (the smallest such set when there are several), so a search reads the rows
// that can match, not every row; ranges and orders alone walk every row, as the reference does.
// A Map compares keys as `passes` compares an equality: by kind and value (0 and -0 alike).

/** Attribute name → value → ids of the instances holding it. */
export type SearchIndex = Map<string, Map<SearchValue, Set<string>>>;

/** Attribute values as a row keeps them (null: none). */
type Values = Readonly<Record<string, SearchValue>> | null | undefined;

/** Moves `id`'s entries from its `before` values to its `after` ones (null: removed or none). */
export function reindexSearch(index: SearchIndex, id: string, before: Values, after: Values): void {
  if (before)
    for (const name of Object.keys(before)) {
      const v = before[name]!;
      if (after && Object.hasOwn(after, name) && after[name] === v) continue;
      const byValue = index.get(name);
      const ids = byValue?.get(v);
      ids?.delete(id);
      if (ids?.size === 0) byValue!.delete(v);
      if (byValue?.size === 0) index.delete(name);
    }
  if (after)
    for (const name of Object.keys(after)) {
      const v = after[name]!;
      if (before && Object.hasOwn(before, name) && before[name] === v) continue;
      const byValue = index.get(name) ?? new Map<SearchValue, Set<string>>();
      index.set(name, byValue);
      const ids = byValue.get(v) ?? new Set<string>();
      byValue.set(v, ids);
      ids.add(id);
    }
}

/**
 * The ids a search can match, from its equalities and `in`s (the fewest of them), or undefined
 * when it has neither: then every row is a candidate. Every filter is checked on them afterwards.
 */
export function searchCandidates(index: SearchIndex, search: ListSearch): string[] | undefined {
  let best: Set<string> | undefined;
  for (const f of search.filters) {
    const values = f.op === 'in' ? f.values : f.op === 'eq' ? [f.value] : undefined;
    if (!values) continue;
    const byValue = index.get(f.name);
    const ids = new Set<string>();
    for (const v of values) for (const id of byValue?.get(v) ?? []) ids.add(id);
    if (!best || ids.size < best.size) best = ids;
  }
  return best && [...best];
}
