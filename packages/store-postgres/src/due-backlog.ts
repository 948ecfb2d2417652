import { type PgQueryable, tableNames } from './setup.js';
import type { PostgresStore } from './store-options.js';

/** Options of {@link postgresDueBacklog}. */
export interface PostgresDueBacklogOptions {
  /** A pool (or client) on the store's database; each read is one statement. */
  pool: PgQueryable;
  /** The store whose table is read (its schema and table names). */
  store: Pick<PostgresStore, 'schema' | 'table'>;
  /** Most instances counted per workflow: a larger backlog reads as this many (default 10 000). */
  max?: number | undefined;
}

/**
 * Counts the instances due by `now` and not claimed, per workflow, as a poll would find them: one
 * statement, each workflow's count a range of the due-lane index cut at `max`, so a read costs at
 * most `max` index entries per workflow however deep the backlog. For `observe({ backlog })` of
 * `@stepfold/otel`'s metrics.
 *
 * @example
 * metrics.observe({ runner, worker, backlog: postgresDueBacklog({ pool, store }) });
 */
export function postgresDueBacklog(
  options: PostgresDueBacklogOptions,
): (query: { now: number; workflows: readonly string[] }) => Promise<Record<string, number>> {
  const { qualified } = tableNames(options.store.schema, options.store.table);
  const max = options.max ?? 10_000;
  if (!(Number.isSafeInteger(max) && max >= 1))
    throw new RangeError(`postgresDueBacklog: max must be a positive integer, got ${String(max)}`);
  // The same effective due time the polls order by (a claimed row is due at its claim's expiry),
  // so the lane index (workflow, GREATEST(wake_at, claimed_until), ...) serves each count.
  const sql = `SELECT w AS workflow, (SELECT count(*) FROM (SELECT 1 FROM ${qualified}
      WHERE workflow = w AND wake_at IS NOT NULL AND GREATEST(wake_at, claimed_until) <= $1 LIMIT $3) d) AS due
    FROM unnest($2::text[]) AS w`;
  return async ({ now, workflows }) => {
    if (workflows.length === 0) return {};
    const r = await options.pool.query<{ workflow: string; due: string | number }>(sql, [
      now,
      [...workflows],
      max,
    ]);
    return Object.fromEntries(r.rows.map((row) => [row.workflow, Number(row.due)]));
  };
}
