import { type Issue, ValidationError } from '../errors.js';
import { isValidId } from '../ids.js';
import { isSearchName, isSearchValue, type SearchValue } from '../search.js';

// `list`'s `where` and `orderBy`, checked and normalized once for every store, and the reference
// semantics the stores' indexes reproduce: how a value matches, and the order values sort in.

/** Operators of a `where` condition besides plain equality. */
export interface WhereOps {
  eq?: SearchValue | undefined;
  gt?: SearchValue | undefined;
  gte?: SearchValue | undefined;
  lt?: SearchValue | undefined;
  lte?: SearchValue | undefined;
  in?: readonly SearchValue[] | undefined;
}

/** A condition on one field: a value (equality) or operators, all of which must hold. */
export type WhereCondition = SearchValue | WhereOps;

/** The order of a listing: a search attribute's name or `id` (the default), ascending unless `desc`. */
export type ListOrder = string | { field: string; desc?: boolean | undefined };

/** One checked condition on an attribute: `in` has `values`, the others `value`. */
export type SearchFilter =
  | { name: string; op: 'eq' | 'gt' | 'gte' | 'lt' | 'lte'; value: SearchValue }
  | { name: string; op: 'in'; values: SearchValue[] };

/** Most values an `in` takes. */
export const MAX_IN_VALUES = 100;

const OPS = new Set(['eq', 'gt', 'gte', 'lt', 'lte', 'in']);

/** The rank of a value's kind in every order: booleans, then numbers, then strings. */
export function kindRank(v: SearchValue): number {
  return typeof v === 'boolean' ? 0 : typeof v === 'number' ? 1 : 2;
}

/** Compares two attribute values as every store orders them: by kind, then value (strings by UTF-16 units). */
export function compareSearch(a: SearchValue, b: SearchValue): number {
  const ka = kindRank(a);
  const kb = kindRank(b);
  if (ka !== kb) return ka - kb;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Whether a stored value (undefined: none) passes one filter: ranges compare only values of one kind. */
export function passes(v: SearchValue | undefined, f: SearchFilter): boolean {
  if (v === undefined) return false;
  if (f.op === 'in') return f.values.some((x) => x === v);
  if (kindRank(v) !== kindRank(f.value)) return false;
  const c = compareSearch(v, f.value);
  return f.op === 'eq'
    ? c === 0
    : f.op === 'gt'
      ? c > 0
      : f.op === 'gte'
        ? c >= 0
        : f.op === 'lt'
          ? c < 0
          : c <= 0;
}

/**
 * Whether a row passes a search's filters and built-ins (and has the attribute it is ordered by):
 * the reference every store's server-side query reproduces.
 */
export function matchesSearch(
  row: { status: string; workflow: string; search: Readonly<Record<string, SearchValue>> | null },
  s: Pick<CheckedSearch, 'filters' | 'statuses' | 'workflows' | 'orderBy'>,
): boolean {
  if (s.statuses && !s.statuses.includes(row.status)) return false;
  if (s.workflows && !s.workflows.includes(row.workflow)) return false;
  const values = row.search ?? {};
  if (s.orderBy !== undefined && !Object.hasOwn(values, s.orderBy)) return false;
  return s.filters.every((f) => passes(Object.hasOwn(values, f.name) ? values[f.name] : undefined, f));
}

/**
 * The order of a search as a comparator over (values, id) pairs: by the ordered attribute (see
 * {@link compareSearch}) then id, or by id alone; reversed with `desc`.
 */
export function searchOrder(
  s: Pick<CheckedSearch, 'orderBy' | 'desc'>,
): (a: { id: string; search: Readonly<Record<string, SearchValue>> | null }, b: typeof a) => number {
  const sign = s.desc ? -1 : 1;
  const by = s.orderBy;
  return (a, b) => {
    const c = by === undefined ? 0 : compareSearch(a.search![by]!, b.search![by]!);
    return sign * (c !== 0 ? c : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  };
}

/** `where` and `orderBy` checked: the filters on attributes, built-ins' values, and the order. */
export interface CheckedSearch {
  filters: SearchFilter[];
  /** Values `status` must be one of (from `where.status`), or undefined. */
  statuses?: string[] | undefined;
  /** Values `workflow` must be one of (from `where.workflow`), or undefined. */
  workflows?: string[] | undefined;
  /** The attribute ordered by, or undefined for id order. */
  orderBy?: string | undefined;
  desc: boolean;
}

/** Checks `where` and `orderBy`; `INVALID_QUERY` listing every problem. */
export function checkSearch(where: unknown, orderBy: unknown): CheckedSearch {
  const issues: Issue[] = [];
  const out: CheckedSearch = { filters: [], desc: false };
  if (where !== undefined && (typeof where !== 'object' || where === null || Array.isArray(where)))
    issues.push({ path: 'where', message: 'must be an object of conditions by field' });
  else if (where)
    for (const name of Object.keys(where)) {
      const at = `where.${name}`;
      const c = (where as Record<string, unknown>)[name];
      if (c === undefined) continue;
      const ops: Record<string, unknown> =
        typeof c === 'object' && c !== null && !Array.isArray(c) ? (c as Record<string, unknown>) : { eq: c };
      if (name === 'status' || name === 'workflow') {
        const values = builtIn(ops, at, issues);
        if (values) out[name === 'status' ? 'statuses' : 'workflows'] = values;
        continue;
      }
      if (!isSearchName(name)) {
        issues.push({ path: at, message: 'not a search attribute name (built-ins: status, workflow)' });
        continue;
      }
      for (const op of Object.keys(ops)) {
        const v = ops[op];
        if (!OPS.has(op))
          issues.push({ path: `${at}.${op}`, message: 'unknown operator (eq, gt, gte, lt, lte, in)' });
        else if (v === undefined) continue;
        else if (op === 'in') {
          if (!Array.isArray(v) || v.length > MAX_IN_VALUES || !v.every(isSearchValue))
            issues.push({ path: `${at}.in`, message: `must be a list of at most ${MAX_IN_VALUES} values` });
          else out.filters.push({ name, op: 'in', values: [...v] });
        } else if (!isSearchValue(v))
          issues.push({ path: `${at}.${op}`, message: 'must be a string, a finite number or a boolean' });
        else out.filters.push({ name, op: op as 'eq', value: v });
      }
    }
  if (orderBy !== undefined) {
    const o =
      typeof orderBy === 'string' ? { field: orderBy } : (orderBy as { field?: unknown; desc?: unknown });
    if (typeof o !== 'object' || o === null || typeof o.field !== 'string')
      issues.push({ path: 'orderBy', message: 'must be a field name or { field, desc }' });
    else if (o.field !== 'id' && !isSearchName(o.field))
      issues.push({ path: 'orderBy.field', message: 'must be id or a search attribute name' });
    else {
      if (o.field !== 'id') out.orderBy = o.field;
      out.desc = o.desc === true;
    }
  }
  if (issues.length) throw new ValidationError('INVALID_QUERY', 'invalid list query', issues);
  return out;
}

/** A built-in's equality or `in` values; null when none can match, undefined when none was given. */
function builtIn(ops: Record<string, unknown>, at: string, issues: Issue[]): string[] | undefined {
  let values: string[] | undefined;
  for (const op of Object.keys(ops)) {
    const v = ops[op];
    if (v === undefined) continue;
    const list = op === 'eq' ? [v] : op === 'in' && Array.isArray(v) ? v : undefined;
    if (!list || list.length > MAX_IN_VALUES || !list.every((x) => typeof x === 'string'))
      issues.push({ path: `${at}.${op}`, message: 'a built-in takes a string (or in: a list of strings)' });
    else values = (values ?? (list as string[])).filter((x) => (list as string[]).includes(x));
  }
  // Every stored status and workflow name is a valid id: anything else matches nothing.
  return values?.filter((x) => isValidId(x));
}

/** Where an attribute-ordered listing resumes: after this value and id. */
export interface SearchCursor {
  value: SearchValue;
  id: string;
}

/** The cursor text of an attribute-ordered page (opaque to callers). */
export function searchCursorText(c: SearchCursor): string {
  return JSON.stringify([c.value, c.id]);
}

/** A cursor text back, or `INVALID_QUERY` when it is not one this store made. */
export function parseSearchCursor(text: string): SearchCursor {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    v = undefined;
  }
  if (!Array.isArray(v) || v.length !== 2 || !isSearchValue(v[0]) || !isValidId(v[1]))
    throw new ValidationError('INVALID_QUERY', 'invalid list query', [
      { path: 'cursor', message: 'not a cursor of a listing ordered by an attribute' },
    ]);
  return { value: v[0], id: v[1] };
}

/** A row as {@link searchRows} reads it. */
export interface SearchRow {
  id: string;
  status: string;
  workflow: string;
  search: Readonly<Record<string, SearchValue>> | null;
}

/**
 * The rows of a search page from every candidate row: those that match, in the search's order,
 * after its cursor, up to `limit + 1` (the extra one says another page exists). The in-memory
 * reference, and what `defineStore` answers with for a driver that does not search.
 */
export function searchRows<R extends SearchRow>(
  rows: Iterable<R>,
  search: CheckedSearch & { after: SearchCursor | null },
  cursor: string | null,
  limit: number,
): R[] {
  const order = searchOrder(search);
  const from: SearchRow | null = search.after
    ? { id: search.after.id, status: '', workflow: '', search: { [search.orderBy!]: search.after.value } }
    : cursor !== null && search.orderBy === undefined
      ? { id: cursor, status: '', workflow: '', search: null }
      : null;
  const out: R[] = [];
  for (const r of rows) if (matchesSearch(r, search) && (from === null || order(r, from) > 0)) out.push(r);
  return out.sort(order).slice(0, limit + 1);
}
