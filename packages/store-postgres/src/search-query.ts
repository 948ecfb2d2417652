import type { ListArgs, ListSearch, SearchFilter, SearchValue } from '@stepfold/engine';
import type { TableNames } from './setup.js';

// `list` with `where` and `orderBy` as one statement over the `$search` table (migration 10): a
// join per condition and one for the order, each an index range of (name, k, n, s, instance), so
// the server reads the entries that match, not the instances. The text depends only on the shape
// of the query (which operators, which kinds), so each shape is prepared once.

/** The kind column of a value: 0 boolean, 1 number, 2 string (the order every store lists kinds in). */
const kindOf = (v: SearchValue): number => (typeof v === 'boolean' ? 0 : typeof v === 'number' ? 1 : 2);
/** The value as its column holds it: a boolean as 0/1 in `n`. */
const columnValue = (v: SearchValue): number | string => (typeof v === 'boolean' ? (v ? 1 : 0) : v);
const SQL_OP = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

/** A statement text and its parameters. */
export interface Statement {
  text: string;
  values: unknown[];
}

/** The kinds the filters of one attribute admit (an entry holds one kind). */
function kindsOf(filters: SearchFilter[]): Set<number> {
  const of = (f: SearchFilter) => (f.op === 'in' ? f.values.map(kindOf) : [kindOf(f.value)]);
  return new Set([0, 1, 2].filter((k) => filters.every((f) => of(f).includes(k))));
}

/** The page statement of a `list` with a search part: up to `args.limit + 1` rows `{ id, json }`. */
export function searchStatement(names: TableNames, args: ListArgs, search: ListSearch): Statement {
  const values: unknown[] = [];
  const byName = new Map<string, SearchFilter[]>();
  for (const f of search.filters) byName.set(f.name, [...(byName.get(f.name) ?? []), f]);
  // Ordered by the one filtered attribute and nothing else: the only sensible plan is that
  // attribute's index range read in order, stopped at the page. Its values go in as one-row
  // subqueries, so the planner estimates them as it would unknown parameters and the cached
  // generic plan costs what a per-call plan would: the server keeps it instead of planning each
  // call with the values (which costs more than running the page on a large table).
  const fixedPlan =
    byName.size === 1 &&
    search.orderBy !== undefined &&
    byName.has(search.orderBy) &&
    !search.statuses &&
    !search.workflows;
  const param = (v: unknown, cast: string): string => {
    values.push(v);
    return fixedPlan ? `(SELECT $${values.length}${cast})` : `$${values.length}${cast}`;
  };
  const valueParam = (v: SearchValue): string =>
    param(columnValue(v), typeof v === 'string' ? '::text' : '::float8');
  // An array for `= ANY(…)`: cast again when wrapped, or `ANY((SELECT …))` would read it as a set of rows.
  const arrayParam = (v: unknown[], cast: string): string => `${param(v, cast)}${fixedPlan ? cast : ''}`;
  // The column a value of kind `k` is in, with the other one pinned so the index range is tight.
  const valueIn = (a: string, k: number) => (k === 2 ? `${a}.n IS NULL AND ${a}.s` : `${a}.n`);
  const joins: string[] = [];
  const where: string[] = [];
  // The order's entry: the filter's own when the order is by a filtered attribute (one entry per
  // instance and name), so the page is that join's index range read in order, with no sort.
  let o = 'o';
  [...byName].forEach(([name, filters], i) => {
    const a = `a${i}`;
    if (name === search.orderBy) o = a;
    const conditions = filters.map((f) => condition(a, f)).join(' AND ');
    joins.push(
      `JOIN ${names.search} ${a} ON ${a}.instance = i.id AND ${a}.name = ${param(name, '::text')} AND ${conditions}`,
    );
  });
  function condition(a: string, f: SearchFilter): string {
    if (f.op !== 'in') {
      const k = kindOf(f.value);
      return `${a}.k = ${k} AND ${valueIn(a, k)} ${SQL_OP[f.op]} ${valueParam(f.value)}`;
    }
    const parts: string[] = [];
    for (const k of [0, 1, 2]) {
      const of = f.values.filter((v) => kindOf(v) === k).map(columnValue);
      if (of.length)
        parts.push(
          `(${a}.k = ${k} AND ${valueIn(a, k)} = ANY(${arrayParam(of, k === 2 ? '::text[]' : '::float8[]')}))`,
        );
    }
    return parts.length ? `(${parts.join(' OR ')})` : 'false';
  }
  if (search.statuses) where.push(`i.status = ANY(${arrayParam(search.statuses, '::text[]')})`);
  if (search.workflows) where.push(`i.workflow = ANY(${arrayParam(search.workflows, '::text[]')})`);
  const dir = search.desc ? 'DESC' : 'ASC';
  const past = search.desc ? '<' : '>';
  let order: string;
  if (search.orderBy === undefined) {
    if (args.cursor !== null) where.push(`i.id ${past} ${param(args.cursor, '::text')}`);
    order = `i.id ${dir}`;
  } else {
    if (o === 'o')
      joins.push(
        `JOIN ${names.search} o ON o.instance = i.id AND o.name = ${param(search.orderBy, '::text')}`,
      );
    const after = search.after;
    if (after) {
      const k = kindOf(after.value);
      const col = k === 2 ? `${o}.s` : `${o}.n`;
      const v = valueParam(after.value);
      where.push(
        `(${o}.k ${past} ${k} OR (${o}.k = ${k} AND (${col} ${past} ${v}
          OR (${col} = ${v} AND ${o}.instance ${past} ${param(after.id, '::text')}))))`,
      );
      const bound = afterBound(o, k, v, search.desc, o === 'o' ? null : kindsOf(byName.get(search.orderBy)!));
      if (bound) where.push(bound);
    }
    order = `${o}.k ${dir}, ${o}.n ${dir}, ${o}.s ${dir}, ${o}.instance ${dir}`;
  }
  const text = `SELECT i.id, COALESCE(i.snapshot_text, i.snapshot::text) AS json FROM ${names.qualified} i
         ${joins.join('\n         ')}
         ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY ${order} LIMIT ${param(args.limit + 1, '::int')}`;
  return { text, values };
}

/**
 * A condition every entry after the cursor meets that the index can start its range at (the
 * exact test beside it is an OR the index cannot), so a later page reads from the cursor on,
 * not every entry before it. `kinds`: what the order's filters admit (null: not filtered).
 * Null for a string cursor in descending order over mixed kinds (strings, then numbers and
 * booleans after it: no one range); that page still reads from the start of the range.
 */
function afterBound(
  o: string,
  k: number,
  v: string,
  desc: boolean,
  kinds: Set<number> | null,
): string | null {
  const to = desc ? '<=' : '>=';
  // One kind only: its value column alone bounds the range (the other column is pinned).
  if (kinds?.size === 1) return kinds.has(k) ? `${k === 2 ? `${o}.s` : `${o}.n`} ${to} ${v}` : null;
  // Booleans and numbers: by kind then value, a row comparison a btree starts at (a later
  // kind compares on `k` alone, so a string's null `n` never decides it).
  if (k !== 2) return `(${o}.k, ${o}.n) ${to} (${k}, ${v})`;
  return desc ? null : `${o}.k = 2 AND ${o}.n IS NULL AND ${o}.s >= ${v}`;
}
