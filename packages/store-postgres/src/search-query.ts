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

/** The page statement of a `list` with a search part: up to `args.limit + 1` rows `{ id, json }`. */
export function searchStatement(names: TableNames, args: ListArgs, search: ListSearch): Statement {
  const values: unknown[] = [];
  const param = (v: unknown, cast = ''): string => {
    values.push(v);
    return `$${values.length}${cast}`;
  };
  // The column a value of kind `k` is in, with the other one pinned so the index range is tight.
  const valueIn = (a: string, k: number) => (k === 2 ? `${a}.n IS NULL AND ${a}.s` : `${a}.n`);
  const joins: string[] = [];
  const where: string[] = [];
  // One join per attribute, all its conditions on the one entry (a range's two ends read one index range).
  const byName = new Map<string, SearchFilter[]>();
  for (const f of search.filters) byName.set(f.name, [...(byName.get(f.name) ?? []), f]);
  // The order's entry: the filter's own when the order is by a filtered attribute (one entry per
  // instance and name), so the page is that join's index range read in order, with no sort.
  let o = 'o';
  [...byName].forEach(([name, filters], i) => {
    const a = `a${i}`;
    if (name === search.orderBy) o = a;
    const conditions = filters.map((f) => condition(a, f)).join(' AND ');
    joins.push(
      `JOIN ${names.search} ${a} ON ${a}.instance = i.id AND ${a}.name = ${param(name)} AND ${conditions}`,
    );
  });
  function condition(a: string, f: SearchFilter): string {
    if (f.op !== 'in') {
      const k = kindOf(f.value);
      return `${a}.k = ${k} AND ${valueIn(a, k)} ${SQL_OP[f.op]} ${param(columnValue(f.value))}`;
    }
    const parts: string[] = [];
    for (const k of [0, 1, 2]) {
      const of = f.values.filter((v) => kindOf(v) === k).map(columnValue);
      if (of.length)
        parts.push(
          `(${a}.k = ${k} AND ${valueIn(a, k)} = ANY(${param(of, k === 2 ? '::text[]' : '::float8[]')}))`,
        );
    }
    return parts.length ? `(${parts.join(' OR ')})` : 'false';
  }
  if (search.statuses) where.push(`i.status = ANY(${param(search.statuses, '::text[]')})`);
  if (search.workflows) where.push(`i.workflow = ANY(${param(search.workflows, '::text[]')})`);
  const dir = search.desc ? 'DESC' : 'ASC';
  const past = search.desc ? '<' : '>';
  let order: string;
  if (search.orderBy === undefined) {
    if (args.cursor !== null) where.push(`i.id ${past} ${param(args.cursor)}`);
    order = `i.id ${dir}`;
  } else {
    if (o === 'o')
      joins.push(`JOIN ${names.search} o ON o.instance = i.id AND o.name = ${param(search.orderBy)}`);
    const after = search.after;
    if (after) {
      const k = kindOf(after.value);
      const col = k === 2 ? `${o}.s` : `${o}.n`;
      where.push(
        `(${o}.k ${past} ${k} OR (${o}.k = ${k} AND (${col} ${past} ${param(columnValue(after.value))}
          OR (${col} = $${values.length} AND ${o}.instance ${past} ${param(after.id)}))))`,
      );
    }
    order = `${o}.k ${dir}, ${o}.n ${dir}, ${o}.s ${dir}, ${o}.instance ${dir}`;
  }
  const text = `SELECT i.id, COALESCE(i.snapshot_text, i.snapshot::text) AS json FROM ${names.qualified} i
         ${joins.join('\n         ')}
         ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY ${order} LIMIT ${param(args.limit + 1)}`;
  return { text, values };
}
