import { isValidId, type Snapshot, type Status, type Store } from '@stepfold/engine';
import { STATUSES } from './views/format.js';
import type { ListFilters } from './views/list-page.js';

/** The list filters from a query string; values that cannot match anything are dropped. */
export function readFilters(query: Record<string, string | undefined>): ListFilters {
  const pick = (name: string) => {
    const v = query[name]?.trim();
    return v && isValidId(v) ? v : undefined;
  };
  const status = query['status']?.trim();
  const workflow = pick('workflow');
  const prefix = pick('prefix');
  const cursor = pick('cursor');
  return {
    ...(status && (STATUSES as readonly string[]).includes(status) ? { status } : {}),
    ...(workflow ? { workflow } : {}),
    ...(prefix ? { prefix } : {}),
    ...(cursor ? { cursor } : {}),
  };
}

/** One page of instances for the filters, and the cursor of the next page (null on the last). */
export async function listInstances(
  store: Store,
  filters: ListFilters,
  limit: number,
): Promise<{ items: Snapshot[]; next: string | null }> {
  const base = {
    ...(filters.status ? { status: filters.status as Status } : {}),
    ...(filters.workflow ? { workflow: filters.workflow } : {}),
  };
  const { prefix } = filters;
  if (!prefix) {
    const page = await store.list({ ...base, limit, cursor: filters.cursor ?? null });
    return { items: page.items, next: page.cursor };
  }
  // Stores list ids in order after the cursor (the last id of the previous page), so the ids with
  // the prefix are one run that starts right after the prefix itself: list from there and stop at
  // the first id without it. Only an id equal to the prefix is not after it; that one is loaded.
  const items: Snapshot[] = [];
  let cursor = filters.cursor && filters.cursor > prefix ? filters.cursor : prefix;
  if (!filters.cursor) {
    const exact = await store.load(prefix);
    const matches =
      exact &&
      (!base.status || exact.status === base.status) &&
      (!base.workflow || exact.workflow.name === base.workflow);
    if (matches) items.push(exact);
  }
  for (;;) {
    const page = await store.list({ ...base, limit, cursor });
    for (let i = 0; i < page.items.length; i++) {
      const s = page.items[i]!;
      if (!s.id.startsWith(prefix)) return { items, next: null };
      items.push(s);
      if (items.length === limit) {
        const after = page.items[i + 1];
        const more = after ? after.id.startsWith(prefix) : page.cursor !== null;
        return { items, next: more ? s.id : null };
      }
    }
    if (page.cursor === null) return { items, next: null };
    cursor = page.cursor;
  }
}
