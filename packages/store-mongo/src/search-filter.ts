import type { ListArgs, ListSearch, SearchFilter, SearchValue } from '@stepfold/engine';
import { searchRows } from '@stepfold/engine';
import type { Collection, Filter } from 'mongodb';
import type { InstanceDocument } from './encode.js';

// Search attributes as a document keeps them: `sa`, one string per attribute (its name, kind and
// value), under one multikey index on (sa, _id). Equality and `in` are exact entries, served by
// the index on MongoDB (FerretDB on SQLite scans: see the README), and a page in id order is read
// from it directly. Ranges and orders by an attribute are applied here over the entries (never
// the snapshots) of the documents the exact conditions select: FerretDB compares strings by its
// database's collation, not by code point, so a range of encoded entries could not be trusted on
// the server.

const SEP = '\u0001';

/** The 16 hex digits of a float64 whose string order is the numbers' order. */
function sortableNumber(n: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, n === 0 ? 0 : n);
  let hi = view.getUint32(0);
  let lo = view.getUint32(4);
  if (hi & 0x8000_0000) {
    hi = ~hi >>> 0;
    lo = ~lo >>> 0;
  } else hi = (hi | 0x8000_0000) >>> 0;
  return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
}

function numberOf(hex: string): number {
  let hi = Number.parseInt(hex.slice(0, 8), 16);
  let lo = Number.parseInt(hex.slice(8), 16);
  if (hi & 0x8000_0000) hi = (hi & 0x7fff_ffff) >>> 0;
  else {
    hi = ~hi >>> 0;
    lo = ~lo >>> 0;
  }
  const view = new DataView(new ArrayBuffer(8));
  view.setUint32(0, hi);
  view.setUint32(4, lo);
  return view.getFloat64(0);
}

/** The kind digit of a value: its rank in the order (booleans, numbers, strings). */
const kindOf = (v: SearchValue): number => (typeof v === 'boolean' ? 0 : typeof v === 'number' ? 1 : 2);

/** Where the entries of `name` of kind `k` begin (and, with `k + 1`, end). */
const prefix = (name: string, k: number): string => `${name}${SEP}${k}`;

/** The stored entry of one attribute. */
export function searchEntry(name: string, v: SearchValue): string {
  const k = kindOf(v);
  const body = k === 0 ? (v ? '1' : '0') : k === 1 ? sortableNumber(v as number) : (v as string);
  return prefix(name, k) + body;
}

/** An entry back as its name and value. */
function parseEntry(entry: string): [string, SearchValue] {
  const at = entry.indexOf(SEP);
  const k = entry[at + 1];
  const body = entry.slice(at + 2);
  return [entry.slice(0, at), k === '0' ? body === '1' : k === '1' ? numberOf(body) : body];
}

/** The condition an equality or `in` puts on `sa`: exact entries, which compare alike under any collation. */
function condition(f: SearchFilter): Filter<InstanceDocument> {
  if (f.op === 'in') return { sa: { $in: f.values.map((v) => searchEntry(f.name, v)) } };
  return { sa: searchEntry(f.name, (f as { value: SearchValue }).value) };
}

/** Whether the server applies a filter: equality and `in` (exact entries); ranges are applied here. */
const exact = (f: SearchFilter): boolean => f.op === 'eq' || f.op === 'in';

/** The filter the server applies: built-ins and the exact conditions. */
export function searchFilter(search: ListSearch): Filter<InstanceDocument> {
  const and: Array<Filter<InstanceDocument>> = search.filters.filter(exact).map(condition);
  if (search.statuses) and.push({ status: { $in: search.statuses } });
  if (search.workflows) and.push({ workflow: { $in: search.workflows } });
  return and.length ? { $and: and } : {};
}

/** A page of a search: up to `args.limit + 1` rows `{ id, json }` in the search's order. */
export async function searchPage(
  docs: Collection<InstanceDocument>,
  args: ListArgs,
  search: ListSearch,
): Promise<Array<{ id: string; json: string }>> {
  const filter = searchFilter(search);
  if (search.orderBy === undefined && search.filters.every(exact)) {
    const paged: Filter<InstanceDocument> =
      args.cursor === null
        ? filter
        : { $and: [filter, { _id: { [search.desc ? '$lt' : '$gt']: args.cursor } }] };
    const found = await docs
      .find(paged, { projection: { snapshot: 1 } })
      .sort({ _id: search.desc ? -1 : 1 })
      .limit(args.limit + 1)
      .toArray();
    return found.map((d) => ({ id: d._id, json: d.snapshot }));
  }
  // Ranges and orders: the entries (never the snapshots) of the documents the exact conditions
  // select, filtered and ordered here; then the page's snapshots by id.
  const entries = await docs.find(filter, { projection: { sa: 1, status: 1, workflow: 1 } }).toArray();
  const rows = entries.map((d) => ({
    id: d._id,
    status: d.status,
    workflow: d.workflow,
    search: Object.fromEntries((d.sa ?? []).map(parseEntry)) as Record<string, SearchValue>,
  }));
  const page = searchRows(rows, search, args.cursor, args.limit);
  if (page.length === 0) return [];
  const found = await docs
    .find({ _id: { $in: page.map((r) => r.id) } }, { projection: { snapshot: 1 } })
    .toArray();
  const json = new Map(found.map((d) => [d._id, d.snapshot]));
  return page.filter((r) => json.has(r.id)).map((r) => ({ id: r.id, json: json.get(r.id)! }));
}
