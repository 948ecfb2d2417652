import type pg from 'pg';

// Due rows loaded in bulk, and the EXPLAIN plan nodes the due-order tests read: shared by the tests
// that count what a poll walks (due-index, claimed-head, vacuum-index-cleanup).

/** One node of an `EXPLAIN (FORMAT JSON)` plan: the fields these tests read. */
export interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Subplan Name'?: string;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

/** `node` and every node under it. */
export const flatten = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(flatten)];

/** Shared buffers a node read (hit or not). */
export const blocks = (n: PlanNode): number => (n['Shared Hit Blocks'] ?? 0) + (n['Shared Read Blocks'] ?? 0);

/**
 * Fills the table `t` (schema-qualified, quoted) with `n` due rows `r-000001`… in due order (wake
 * times 1000 + g), of workflow `wf`, or of `workflows` workflows `wf-<g % workflows>`; then
 * VACUUM ANALYZE.
 */
export async function fillDueRows(pool: pg.Pool, t: string, n: number, workflows?: number): Promise<void> {
  const wf = workflows === undefined ? `'wf'` : `'wf-' || (g % ${workflows})`;
  await pool.query(
    `INSERT INTO ${t} (id, version, status, workflow, wake_at, snapshot)
     SELECT id, 1, 'waiting', wf, 1000 + g,
       -- Enough of a snapshot for a load (the tests measure the due index, not the reducer).
       jsonb_build_object('schemaVersion', 1, 'id', id, 'version', 1, 'status', 'waiting',
         'workflow', jsonb_build_object('name', wf, 'version', 1, 'hash', 'h'), 'wakeAt', 1000 + g)
     FROM generate_series(1, $1::int) AS g,
       LATERAL (SELECT 'r-' || lpad(g::text, 6, '0') AS id, ${wf} AS wf) AS x`,
    [n],
  );
  await pool.query(`VACUUM ANALYZE ${t}`);
}
