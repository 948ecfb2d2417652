import type { TableNames } from './setup.js';

/** Which form of the save statement a conditional update runs. */
export interface SaveForm {
  /** Also deletes the consumed inbox seqs (`$10`). */
  consume: boolean;
  /** Also requires the stored snapshot and consumed signals to match (`$11` digest, `$12` JSON). */
  match: boolean;
  /** Also NOTIFYs (the payload is the last parameter). */
  notify: boolean;
}

/**
 * The statement texts of one instance table, built once per store. Names and `channel` are
 * validated identifiers. Every text is fixed (no `$n IS NULL OR …`), so a prepared generic plan
 * still picks the right index for each form.
 */
export function storeStatements(
  { qualified: t, sent }: TableNames,
  channel: string,
  column: 'text' | 'jsonb' = 'text',
) {
  // A write that announces a wake time runs in a CTE with pg_notify over its RETURNING: a failed
  // condition returns no row and sends nothing, and the notice is delivered at commit.
  const notifying = (sql: string, payload: number) =>
    `WITH w AS (${sql} RETURNING 1) SELECT pg_notify('${channel}', $${payload}) FROM w`;
  const CREATE = `INSERT INTO ${t} (id, version, status, workflow, wake_at, definition, snapshot, snapshot_text)
           VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)`;
  const SAVE = `UPDATE ${t} SET version = $3, status = $4, workflow = $5, wake_at = $6, definition = $7,
           claimed_until = NULL, claim_token = NULL, snapshot = $8::jsonb, snapshot_text = $9
         WHERE id = $1 AND version = $2`;
  // The consumed signals' stored texts, "\n" before each, in the order consumed: with the stored
  // snapshot text, what the digest `$11` was computed over (defineStore's `match.digest`).
  const events = `COALESCE((SELECT string_agg(E'\\n' || x.event, '' ORDER BY array_position($10::bigint[], x.seq))
           FROM ${sent} x WHERE x.id = $1 AND x.seq = ANY($10::bigint[])), '')`;
  const digest = (json: string) =>
    `sha256(convert_to(${json} || ${events}, 'UTF8')) = decode($11::text, 'hex')`;
  // A row in the JSONB column has no text to hash: equal as JSONB to `$12` (given by jsonb stores
  // only) and `$12` hashed with the signals stands for it.
  // A text store's rows are all text: a bare comparison with the digest as bytea (`$11`), nothing a
  // custom plan could fold, so PostgreSQL keeps the prepared generic plan instead of planning each
  // take again (the CASE form was re-planned on every execution: 0.11 ms a take).
  const MATCH =
    column === 'text'
      ? ` AND sha256(convert_to(snapshot_text || ${events}, 'UTF8')) = $11::bytea`
      : ` AND CASE WHEN snapshot_text IS NOT NULL THEN ${digest('snapshot_text')}
           ELSE snapshot = $12::text::jsonb AND ${digest('$12::text')} END`;
  const save = ({ consume, match, notify }: SaveForm): string => {
    const update = match ? SAVE + MATCH : SAVE;
    const payload = match ? (column === 'text' ? 12 : 13) : consume ? 11 : 10;
    // Nothing consumed: no inbox CTE (a matched take of a task alone is a plain conditional update).
    if (!consume) return notify ? notifying(update, payload) : update;
    // The signals applied go only if the update's condition held.
    return `WITH w AS (${update} RETURNING 1),
    d AS (DELETE FROM ${sent} WHERE id = $1 AND seq = ANY($10::bigint[]) AND EXISTS (SELECT 1 FROM w))
    SELECT ${notify ? `pg_notify('${channel}', $${payload})` : '1'} FROM w`;
  };
  // Due rows by effective due time, all workflows or one lane, each served by its partial index
  // (migration 5): GREATEST ignores NULL, so an unclaimed row is due at wake_at and a claimed one
  // at its claim's expiry, and a poll reads about LIMIT index entries however many are claimed.
  // `wake_at IS NOT NULL` is the indexes' predicate, stated so a generic plan can prove it.
  // MATERIALIZED: the locking subquery runs once, so LIMIT bounds the batch. The UPDATE finds its
  // rows by key from an array: joined to the CTE, a generic plan may hash a scan of the table.
  const dueAt = 'GREATEST(wake_at, claimed_until)';
  const due = (narrow: string, returning = '') => `WITH due AS MATERIALIZED (
           SELECT id FROM ${t}
           WHERE ${narrow}wake_at IS NOT NULL AND ${dueAt} <= $1
           ORDER BY ${dueAt}, wake_at, id
           LIMIT $3
           FOR UPDATE SKIP LOCKED)
         UPDATE ${t} AS i SET claimed_until = $2, claim_token = $4 WHERE i.id = ANY(ARRAY(SELECT id FROM due))
         RETURNING i.id, i.wake_at${returning}`;
  const json = ', COALESCE(i.snapshot_text, i.snapshot::text) AS json';
  return {
    CREATE,
    CREATE_NOTIFY: notifying(CREATE, 9),
    save,
    LIST_DUE: due(''),
    LIST_DUE_LANE: due('workflow = $5 AND '),
    CLAIM_DUE: {
      all: due('', json),
      lane: due('workflow = $5 AND ', json),
      ids: due('id = ANY($5::text[]) AND ', json),
      laneIds: due('workflow = $5 AND id = ANY($6::text[]) AND ', json),
    },
    RELEASE: `UPDATE ${t} SET claimed_until = NULL, claim_token = NULL
         WHERE id = ANY($1::text[]) AND claim_token = $2`,
    LOAD: `SELECT COALESCE(snapshot_text, snapshot::text) AS json FROM ${t} WHERE id = $1`,
    VERSION: `SELECT version FROM ${t} WHERE id = $1`,
    // The instance and any signals sent to it, in one statement.
    DELETE: `WITH s AS (DELETE FROM ${sent} WHERE id = $1) DELETE FROM ${t} WHERE id = $1`,
    // A conditional delete: the signals go only with an instance removed at the version given.
    DELETE_AT: `WITH d AS (DELETE FROM ${t} WHERE id = $1 AND version = $2 RETURNING id),
         s AS (DELETE FROM ${sent} WHERE id = $1 AND EXISTS (SELECT 1 FROM d))
         SELECT id FROM d`,
    /** A page of `list`: `where` of fixed clauses, the limit the last parameter. */
    list: (
      where: string[],
      limit: number,
    ) => `SELECT id, COALESCE(snapshot_text, snapshot::text) AS json FROM ${t}
         ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id LIMIT $${limit}`,
  };
}
