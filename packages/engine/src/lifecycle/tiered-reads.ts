import type { Snapshot } from '../snapshot.js';
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
 * `list` over both tiers, ordered by id. Both stores page by id, so one id is a cursor for both:
 * the merged page keeps only ids up to where both pages are complete, then at most `limit`.
 */
export async function tieredList(hot: Store, cold: Store, query: ListQuery): Promise<ListPage> {
  if (!(query.limit >= 1)) return hot.list(query);
  const limit = Math.floor(query.limit);
  const [h, c] = await Promise.all([hot.list(query), cold.list(query)]);
  const lastOf = (p: ListPage) => (p.cursor === null ? null : (p.items[p.items.length - 1]?.id ?? p.cursor));
  const bounds = [lastOf(h), lastOf(c)].filter((b): b is string => b !== null);
  const bound = bounds.sort()[0] ?? null;
  const within = (s: Snapshot) => bound === null || s.id <= bound;
  const hotItems = h.items.filter(within);
  const hotIds = new Set(h.items.map((s) => s.id));
  const coldItems = await onlyCold(
    hot,
    c.items.filter((s) => within(s) && !hotIds.has(s.id)),
  );
  const merged = [...hotItems, ...coldItems].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const items = merged.slice(0, limit);
  const more = merged.length > limit || bound !== null;
  const last = items[items.length - 1]?.id ?? bound;
  return { items, cursor: more ? last : null };
}
