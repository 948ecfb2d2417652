import type { Snapshot } from '../snapshot.js';
import {
  checkSearch,
  parseSearchCursor,
  type SearchRow,
  searchCursorText,
  searchOrder,
} from '../store/list-query.js';
import type { ClaimQuery, DueClaims, DueQuery, ListPage, ListQuery, Store } from '../store/store.js';

// The reads of a tiered store that look at both tiers: `list`, `listDue` and the claims. Hot wins:
// an id in both is the hot copy (the cold one is either mid-move or a stale leftover).

/**
 * The part of a due batch offered to the cold tier first: cold instances are rarely due (finished
 * or long asleep), but a hot tier with a constant backlog must not starve them forever.
 */
export function coldShare(limit: number): number {
  return limit >= 2 ? Math.max(1, Math.floor(limit / 8)) : limit;
}

/** `listDue` over both tiers: cold's share first (asked first, so hot fills what cold left), then hot's, each earliest first. */
export async function tieredListDue(
  hot: Store,
  cold: Store,
  now: number,
  limit: number,
  query?: DueQuery,
): Promise<string[]> {
  if (!(limit >= 1)) return hot.listDue(now, limit, query);
  const n = Math.floor(limit);
  const c = await cold.listDue(now, coldShare(n), query);
  const h = c.length < n ? await hot.listDue(now, n - c.length, query) : [];
  const inHot = new Set(h);
  return [...h, ...c.filter((id) => !inHot.has(id))];
}

/** Cold snapshots whose id hot does not hold: the others are stale copies, invisible by the hot-wins rule. */
async function onlyCold(hot: Store, items: readonly Snapshot[]): Promise<Snapshot[]> {
  const inHot = await Promise.all(items.map((s) => hot.load(s.id)));
  return items.filter((_, i) => inHot[i] === null);
}

/** Claims over both tiers (each tier's claims, as `listDue`); only made when both have claims. */
export function tieredClaims(hot: Store, h: DueClaims, c: DueClaims): DueClaims {
  return {
    async claimDue(now, limit, query?: ClaimQuery) {
      if (!(limit >= 1)) return h.claimDue(now, limit, query);
      const n = Math.floor(limit);
      const fromCold = await onlyCold(hot, await c.claimDue(now, coldShare(n), query));
      const fromHot = fromCold.length < n ? await h.claimDue(now, n - fromCold.length, query) : [];
      const inHot = new Set(fromHot.map((s) => s.id));
      return [...fromHot, ...fromCold.filter((s) => !inHot.has(s.id))];
    },
    async release(ids, token) {
      await Promise.all([h.release(ids, token), c.release(ids, token)]);
    },
  };
}

/**
 * `list` over both tiers, in the query's order (id, or `orderBy`'s). Both stores page in that
 * order, so one cursor serves both: the merged page keeps only rows up to where both pages are
 * complete, then at most `limit`.
 */
export async function tieredList(hot: Store, cold: Store, query: ListQuery): Promise<ListPage> {
  if (!(query.limit >= 1)) return hot.list(query);
  const limit = Math.floor(query.limit);
  const checked =
    query.where !== undefined || query.orderBy !== undefined
      ? checkSearch(query.where, query.orderBy)
      : { filters: [], desc: false };
  const order = searchOrder(checked);
  const by = checked.orderBy;
  const [h, c] = await Promise.all([hot.list(query), cold.list(query)]);
  const rowOf = (s: Snapshot): SearchRow => ({
    id: s.id,
    status: s.status,
    workflow: '',
    search: s.search ?? null,
  });
  const cursorRow = (cursor: string): SearchRow => {
    if (by === undefined) return { id: cursor, status: '', workflow: '', search: null };
    const at = parseSearchCursor(cursor);
    return { id: at.id, status: '', workflow: '', search: { [by]: at.value } };
  };
  const lastOf = (p: ListPage): SearchRow | null => {
    if (p.cursor === null) return null;
    const last = p.items[p.items.length - 1];
    return last ? rowOf(last) : cursorRow(p.cursor);
  };
  const bounds = [lastOf(h), lastOf(c)].filter((b): b is SearchRow => b !== null);
  const bound = bounds.sort(order)[0] ?? null;
  const within = (s: Snapshot) => bound === null || order(rowOf(s), bound) <= 0;
  const hotItems = h.items.filter(within);
  const hotIds = new Set(h.items.map((s) => s.id));
  const coldItems = await onlyCold(
    hot,
    c.items.filter((s) => within(s) && !hotIds.has(s.id)),
  );
  const merged = [...hotItems, ...coldItems].sort((a, b) => order(rowOf(a), rowOf(b)));
  const items = merged.slice(0, limit);
  const more = merged.length > limit || bound !== null;
  const last = items.length ? rowOf(items[items.length - 1]!) : bound;
  if (!more || last === null) return { items, cursor: null };
  return {
    items,
    cursor: by === undefined ? last.id : searchCursorText({ value: last.search![by]!, id: last.id }),
  };
}
