import type { ListArgs, ListSearch, SearchValue } from '@stepfold/engine';
import { matchesSearch } from '@stepfold/engine';
import { jsonOf } from './encode.js';
import { Expr } from './expression.js';
import { LISTED_ATTRIBUTES, type ListedRow, plainPage } from './list.js';
import { batchGet, type Item, queryItems, type Table } from './requests.js';
import { instanceOfKey, type KeyRange, keyRange, searchKey, valuePrefix } from './search-key.js';
import { itemValues } from './search-writes.js';
import { SEARCH_INDEX } from './setup.js';

// A search reads one attribute's index entries (see search-key.ts), then the instances they name,
// each checked against every condition (the others, the built-ins, and the entry itself: an index
// entry may lag on AWS).

// Beyond this the highest key character: the end of a run of keys with one value.
const TOP = '\u007f';

/** How a search reads the index: the attribute it reads, and which of its entries. */
type Plan =
  /** By an attribute's value (then id): its entries in the range, in key order. */
  | { by: 'order'; name: string; range: KeyRange }
  /** In id order, by exact values: for each value its entries, in id order, merged. */
  | { by: 'values'; name: string; values: SearchValue[] }
  /** In id order, by a range of values: every entry of the range, sorted by id here. */
  | { by: 'range'; name: string; range: KeyRange }
  /** No condition on an attribute (only `status`, `workflow` or `desc`): the plain listing. */
  | { by: 'plain' };

/**
 * The plan of a search, or null when nothing can match. Ordered by an attribute: its entries.
 * Else the attribute with the fewest exact values (an `eq` is one, an `in` its values), or the
 * first with a range: a store without statistics cannot know more of which is most selective.
 */
export function planOf(s: ListSearch): Plan | null {
  if (s.orderBy !== undefined) {
    const range = keyRange(s.filters.filter((f) => f.name === s.orderBy));
    return range && { by: 'order', name: s.orderBy, range };
  }
  let best: Plan = { by: 'plain' };
  let fewest = Number.POSITIVE_INFINITY;
  for (const name of new Set(s.filters.map((f) => f.name))) {
    const mine = s.filters.filter((f) => f.name === name);
    const range = keyRange(mine);
    if (range === null) return null;
    let values: SearchValue[] | undefined;
    for (const f of mine) {
      const these = f.op === 'eq' ? [f.value] : f.op === 'in' ? f.values : undefined;
      if (these && (values === undefined || these.length < values.length)) values = these;
    }
    if (values !== undefined) {
      const unique = [...new Map(values.map((v): [string, SearchValue] => [valuePrefix(v), v])).values()];
      if (unique.length < fewest) {
        best = { by: 'values', name, values: unique };
        fewest = unique.length;
      }
    } else if (best.by === 'plain') best = { by: 'range', name, range };
  }
  return best;
}

/** Up to `limit + 1` instances of a search, in its order, after its cursor. */
export async function searchPage(table: Table, args: ListArgs, s: ListSearch): Promise<ListedRow[]> {
  const plan = planOf(s);
  if (plan === null) return [];
  const keep = (item: Item) =>
    matchesSearch(
      { status: item['status']?.S ?? '', workflow: item['workflow']?.S ?? '', search: itemValues(item) },
      s,
    );
  if (plan.by === 'plain') return plainPage(table, args, s.desc, keep);
  const rows = new Rows(table, args.limit + 1, keep);
  if (plan.by === 'order') await ordered(table, plan.name, plan.range, s, rows);
  else if (plan.by === 'values') await byValues(table, plan.name, plan.values, args.cursor, s.desc, rows);
  else await byRange(table, plan.name, plan.range, args.cursor, s.desc, rows);
  return rows.list;
}

/** The rows of one page as they are found, each instance once. */
class Rows {
  readonly list: ListedRow[] = [];
  private readonly seen = new Set<string>();

  constructor(
    private readonly table: Table,
    readonly want: number,
    private readonly keep: (item: Item) => boolean,
  ) {}

  get missing(): number {
    return this.want - this.list.length;
  }

  /**
   * Reads the instances `ids` names (in order) and adds those that match, while rows are missing;
   * `entry` (given the item) says whether the entry read is still the instance's.
   */
  async add(ids: readonly string[], entry?: (item: Item, index: number) => boolean): Promise<void> {
    const found = await batchGet(this.table, ids, LISTED_ATTRIBUTES);
    ids.forEach((id, i) => {
      const item = found.get(id);
      if (!item || this.missing <= 0 || this.seen.has(id) || !this.keep(item)) return;
      if (entry && !entry(item, i)) return;
      this.seen.add(id);
      this.list.push({ id, json: jsonOf(item) });
    });
  }
}

/** Keys of the index entries of attribute `name` in `range`, in key order (reversed with `desc`), up to `want`. */
async function entries(
  table: Table,
  name: string,
  range: KeyRange,
  desc: boolean,
  want: number,
): Promise<string[]> {
  if (range.lo > range.hi) return [];
  const x = new Expr();
  const keys = await queryItems(
    table.client,
    {
      TableName: table.name,
      IndexName: SEARCH_INDEX,
      KeyConditionExpression: `${x.n('searchName')} = ${x.s(name)} AND ${x.n('searchKey')} BETWEEN ${x.s(range.lo)} AND ${x.s(range.hi)}`,
      ProjectionExpression: x.n('searchKey'),
      ScanIndexForward: !desc,
      ...x.fields,
    },
    want,
  );
  return keys.flatMap((k) => k['searchKey']?.S ?? []);
}

/** Ordered by `name`: its entries in key order from after the cursor's (value, id). */
async function ordered(
  table: Table,
  name: string,
  range: KeyRange,
  s: ListSearch,
  rows: Rows,
): Promise<void> {
  let { lo, hi } = range;
  // The range is inclusive: the cursor's own entry is read again and skipped.
  let skip = s.after ? searchKey(s.after.value, s.after.id) : undefined;
  if (skip !== undefined && !s.desc && skip > lo) lo = skip;
  if (skip !== undefined && s.desc && skip < hi) hi = skip;
  while (rows.missing > 0) {
    const asked = rows.missing + (skip === undefined ? 0 : 1);
    const keys = await entries(table, name, { lo, hi }, s.desc, asked);
    const got = keys.filter((k) => k !== skip);
    // An entry that lags a save names an instance whose value moved: it is listed at its new place.
    await rows.add(got.map(instanceOfKey), (item, i) => {
      const v = itemValues(item)[name];
      return v !== undefined && searchKey(v, instanceOfKey(got[i]!)) === got[i];
    });
    if (keys.length < asked) return;
    skip = keys[keys.length - 1]!;
    if (s.desc) hi = skip;
    else lo = skip;
  }
}

/**
 * In id order, instances holding one of `values` of `name`: for each value its entries after the
 * cursor, in id order, merged. A value that returned all it was asked for may have more: only ids
 * up to the nearest of those ends are sure to be the next, so a round takes those.
 */
async function byValues(
  table: Table,
  name: string,
  values: readonly SearchValue[],
  cursor: string | null,
  desc: boolean,
  rows: Rows,
): Promise<void> {
  const before = (a: string, b: string) => (desc ? a > b : a < b);
  for (let after = cursor; rows.missing > 0; ) {
    // One more than missing: the cursor's own entry is read again (the range is inclusive).
    const asked = rows.missing + (after === null ? 0 : 1);
    const reads = await Promise.all(
      values.map((v) => {
        const p = valuePrefix(v);
        const range =
          after === null
            ? { lo: p, hi: p + TOP }
            : desc
              ? { lo: p, hi: p + after }
              : { lo: p + after, hi: p + TOP };
        return entries(table, name, range, desc, asked);
      }),
    );
    let bound: string | undefined;
    const ids = new Set<string>();
    for (const keys of reads) {
      for (const k of keys) ids.add(instanceOfKey(k));
      const last = keys.length === asked ? instanceOfKey(keys[keys.length - 1]!) : undefined;
      if (last !== undefined && (bound === undefined || before(last, bound))) bound = last;
    }
    if (after !== null) ids.delete(after);
    const next = [...ids]
      .filter((id) => bound === undefined || !before(bound, id))
      .sort((a, b) => (before(a, b) ? -1 : 1));
    // Only as many instances are read as rows are missing: the rest wait for a later round.
    for (let i = 0; i < next.length && rows.missing > 0; ) {
      const chunk = next.slice(i, i + rows.missing);
      i += chunk.length;
      await rows.add(chunk);
      after = chunk[chunk.length - 1]!;
    }
    if (bound === undefined || next.length === 0) return;
  }
}

/** In id order, instances with `name` in `range`: every entry of the range, sorted by id here. */
async function byRange(
  table: Table,
  name: string,
  range: KeyRange,
  cursor: string | null,
  desc: boolean,
  rows: Rows,
): Promise<void> {
  const keys = await entries(table, name, range, false, Number.POSITIVE_INFINITY);
  const ids = [...new Set(keys.map(instanceOfKey))]
    .filter((id) => cursor === null || (desc ? id < cursor : id > cursor))
    .sort();
  if (desc) ids.reverse();
  for (let i = 0; i < ids.length && rows.missing > 0; ) {
    const chunk = ids.slice(i, i + rows.missing);
    i += chunk.length;
    await rows.add(chunk);
  }
}
