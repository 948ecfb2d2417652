/**
 * The statement texts of one instance table, built once per store. `t` is the quoted
 * `"schema"."table"` and `channel` the table's NOTIFY channel, both validated identifiers.
 */
export function storeStatements(t: string, channel: string) {
  // Statement texts, built once. A write whose snapshot announces a wake time (kit.encode's
  // `notice`) runs the *_NOTIFY form: the same write in a CTE and pg_notify over its RETURNING, so
  // the notice goes out only if the row was written (a failed condition returns no row, sends
  // nothing, and leaves rowCount 0) and is delivered at commit, never before the write is visible.
  // Writes without a notice run the plain statement and pay nothing for wakes.
  const notifying = (sql: string, payload: number) =>
    `WITH w AS (${sql} RETURNING 1) SELECT pg_notify('${channel}', $${payload}) FROM w`;
  const CREATE = `INSERT INTO ${t} (id, version, status, workflow, wake_at, snapshot, snapshot_text)
           VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)`;
  const CREATE_NOTIFY = notifying(CREATE, 8);
  const SAVE = `UPDATE ${t} SET version = $3, status = $4, workflow = $5, wake_at = $6, claimed_until = NULL,
           snapshot = $7::jsonb, snapshot_text = $8
         WHERE id = $1 AND version = $2`;
  const SAVE_NOTIFY = notifying(SAVE, 9);
  // Due rows by effective due time, all workflows or one lane ($4), each served by its partial
  // index (migration 5): GREATEST ignores NULL, so an unclaimed row is due at wake_at and a claimed
  // one at its claim's expiry. A claim thus moves its row out of the head of the order, and a poll
  // reads about LIMIT index entries however many rows are claimed. `wake_at IS NOT NULL` is the
  // indexes' predicate, stated so a generic plan can prove it. MATERIALIZED: the locking subquery
  // runs once, so LIMIT bounds the batch. The UPDATE finds its rows by key from an array: joined to
  // the CTE instead, a generic plan (which guesses a tenth of the table for LIMIT $3) may hash a
  // scan of a small table on every poll. claimDue's forms also return the JSON, and may narrow to
  // given ids ($5).
  const dueAt = 'GREATEST(wake_at, claimed_until)';
  const due = (lane: string, returning = '') => `WITH due AS MATERIALIZED (
           SELECT id FROM ${t}
           WHERE ${lane}wake_at IS NOT NULL AND ${dueAt} <= $1
           ORDER BY ${dueAt}, wake_at, id
           LIMIT $3
           FOR UPDATE SKIP LOCKED)
         UPDATE ${t} AS i SET claimed_until = $2 WHERE i.id = ANY(ARRAY(SELECT id FROM due))
         RETURNING i.id, i.wake_at${returning}`;
  const LIST_DUE = due('');
  const LIST_DUE_LANE = due('workflow = $4 AND ');
  const json = ', COALESCE(i.snapshot_text, i.snapshot::text) AS json';
  // Four fixed texts, not one with `$4 IS NULL OR …`: a prepared generic plan must still pick the
  // lane index for a lane and the primary key for named ids.
  const CLAIM_DUE = {
    all: due('', json),
    lane: due('workflow = $4 AND ', json),
    ids: due('id = ANY($4::text[]) AND ', json),
    laneIds: due('workflow = $4 AND id = ANY($5::text[]) AND ', json),
  } as const;
  const RELEASE_DUE = `UPDATE ${t} SET claimed_until = NULL
         WHERE id = ANY($1::text[]) AND claimed_until IS NOT NULL`;

  return { CREATE, CREATE_NOTIFY, SAVE, SAVE_NOTIFY, LIST_DUE, LIST_DUE_LANE, CLAIM_DUE, RELEASE_DUE };
}
