import type { QueuedSave } from './save-batch.js';

/** Which column holds the snapshots a store writes (see `PostgresStoreOptions.snapshotColumn`). */
export type SnapshotColumn = 'text' | 'jsonb';

// Parameters per row of the group-commit statement, in the order of its VALUES columns.
const PER_ROW = 11;

/**
 * The group-commit statement for `n` saves (texts cached per `n`): one UPDATE joined to the rows'
 * VALUES, each row conditional on its own version, returning the ids written; the notices of the
 * rows written go out in the same statement (delivered at commit). Ids in one statement must differ.
 */
export function saveManyStatement(
  table: string,
  channel: string,
  column: SnapshotColumn,
): (n: number) => string {
  const [cast, set] =
    column === 'jsonb'
      ? ['jsonb', 'snapshot = v.snapshot, snapshot_text = NULL']
      : ['text', 'snapshot = NULL, snapshot_text = v.snapshot'];
  const texts = new Map<number, string>();
  return (n) => {
    let text = texts.get(n);
    if (text === undefined) {
      const rows = Array.from({ length: n }, (_, k) => {
        const p = (j: number) => `$${k * PER_ROW + j}`;
        // The first row's casts type the VALUES columns.
        return k === 0
          ? `(${p(1)}::text, ${p(2)}::int8, ${p(3)}::int8, ${p(4)}::text, ${p(5)}::text, ${p(6)}::int8, ${p(7)}::text, ${p(8)}::text, ${p(9)}::jsonb, ${p(10)}::${cast}, ${p(11)}::text)`
          : `(${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)}, ${p(8)}, ${p(9)}, ${p(10)}, ${p(11)})`;
      });
      text = `WITH v (id, expected, version, status, workflow, wake_at, definition, fair_key, search, snapshot, notice) AS (VALUES ${rows.join(', ')}),
         w AS (UPDATE ${table} AS i SET version = v.version, status = v.status, workflow = v.workflow,
             wake_at = v.wake_at, definition = v.definition, fair_key = v.fair_key, search = v.search,
             claimed_until = NULL, claim_token = NULL, ${set}
           FROM v WHERE i.id = v.id AND i.version = v.expected
           RETURNING i.id, v.notice)
         SELECT id, CASE WHEN notice IS NOT NULL THEN pg_notify('${channel}', notice) END AS sent FROM w`;
      texts.set(n, text);
    }
    return text;
  };
}

/** The parameters of {@link saveManyStatement} for `saves` (rows of the statement's column). */
export function saveManyValues(saves: readonly QueuedSave[]): unknown[] {
  const values: unknown[] = [];
  for (const { row, expected, payload } of saves) {
    values.push(
      row.id,
      expected,
      row.version,
      row.status,
      row.workflow,
      row.wakeAt,
      row.definition,
      row.fairKey,
      row.search,
      row.json,
      payload ?? null,
    );
  }
  return values;
}
