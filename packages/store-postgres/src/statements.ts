import type { TableNames } from './setup.js';

/** Which form of the save statement a conditional update runs. */
export interface SaveForm {
  /** Also deletes the consumed inbox seqs (`$12`). */
  consume: boolean;
  /** Also requires the stored snapshot and consumed signals to match (`$13` digest, `$14` JSON). */
  match: boolean;
  /** Also NOTIFYs (the payload is the last parameter). */
  notify: boolean;
}

/** The largest poll whose statement reads each fairness key through a constant LIMIT (see `fair` in {@link storeStatements}). */
export const CAPPED_LIMIT = 1000;

/** The columns a create writes, in the order of its parameters (`$1`-`$10` of a create). */
export const CREATED_COLUMNS =
  'id, version, status, workflow, wake_at, definition, fair_key, search, snapshot, snapshot_text';

/**
 * The statement texts of one instance table, built once per store. Names and `channel` are
 * validated identifiers. Every text is fixed (no `$n IS NULL OR …`), so a prepared generic plan
 * still picks the right index for each form.
 */
export function storeStatements(
  { qualified: t, sent, fair: served }: TableNames,
  channel: string,
  column: 'text' | 'jsonb' = 'text',
) {
  // A write that announces a wake time runs in a CTE with pg_notify over its RETURNING: a failed
  // condition returns no row and sends nothing, and the notice is delivered at commit.
  const notifying = (sql: string, payload: number) =>
    `WITH w AS (${sql} RETURNING 1) SELECT pg_notify('${channel}', $${payload}) FROM w`;
  const CREATE = `INSERT INTO ${t} (${CREATED_COLUMNS})
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10)`;
  const SAVE = `UPDATE ${t} SET version = $3, status = $4, workflow = $5, wake_at = $6, definition = $7,
           fair_key = $8, search = $9::jsonb, claimed_until = NULL, claim_token = NULL, snapshot = $10::jsonb,
           snapshot_text = $11
         WHERE id = $1 AND version = $2`;
  // The consumed signals' stored texts, "\n" before each, in the order consumed: with the stored
  // snapshot text, what the digest `$13` was computed over (defineStore's `match.digest`).
  const events = `COALESCE((SELECT string_agg(E'\\n' || x.event, '' ORDER BY array_position($12::bigint[], x.seq))
           FROM ${sent} x WHERE x.id = $1 AND x.seq = ANY($12::bigint[])), '')`;
  const digest = (json: string) =>
    `sha256(convert_to(${json} || ${events}, 'UTF8')) = decode($13::text, 'hex')`;
  // A row in the JSONB column has no text to hash: equal as JSONB to `$13` (given by jsonb stores
  // only) and `$13` hashed with the signals stands for it.
  // A text store's rows are all text: a bare comparison with the digest as bytea (`$12`), nothing a
  // custom plan could fold, so PostgreSQL keeps the prepared generic plan instead of planning each
  // take again (the CASE form was re-planned on every execution: 0.11 ms a take).
  const MATCH =
    column === 'text'
      ? ` AND sha256(convert_to(snapshot_text || ${events}, 'UTF8')) = $13::bytea`
      : ` AND CASE WHEN snapshot_text IS NOT NULL THEN ${digest('snapshot_text')}
           ELSE snapshot = $14::text::jsonb AND ${digest('$14::text')} END`;
  const save = ({ consume, match, notify }: SaveForm): string => {
    const update = match ? SAVE + MATCH : SAVE;
    const payload = match ? (column === 'text' ? 14 : 15) : consume ? 13 : 12;
    // Nothing consumed: no inbox CTE (a matched take of a task alone is a plain conditional update).
    if (!consume) return notify ? notifying(update, payload) : update;
    // The signals applied go only if the update's condition held.
    return `WITH w AS (${update} RETURNING 1),
    d AS (DELETE FROM ${sent} WHERE id = $1 AND seq = ANY($12::bigint[]) AND EXISTS (SELECT 1 FROM w))
    SELECT ${notify ? `pg_notify('${channel}', $${payload})` : '1'} FROM w`;
  };
  // Due rows by effective due time: GREATEST ignores NULL, so an unclaimed row is due at wake_at
  // and a claimed one at its claim's expiry, and a poll reads no claimed row. `wake_at IS NOT NULL`
  // is the due indexes' predicate, stated so a generic plan can prove it.
  const dueAt = 'GREATEST(wake_at, claimed_until)';
  // The fair due order (see `Store.listDue`), all workflows or one lane, over the due indexes by
  // fairness key (migration 9), bounded by the keys, never by one key's backlog:
  // - `keys`: every fair_key with a row that has a wake time, with its first row in the due order
  //   (the first entry of the key in the index), one index probe each (a skip scan);
  // - `heads`: the keys whose first row is due; `chosen`: the `limit` keys whose turn comes first,
  //   a key's turn the later of its head and when it was last served (`$fair`);
  // - `picked`: each chosen key's earliest due rows from its head on, at most `limit`, locked with
  //   SKIP LOCKED so racing pollers take disjoint rows. Starting at the head (a row comparison the
  //   index seeks to) rather than at the key's start, the scan skips the entries before it, which
  //   the key's probe has just walked: the dead entries of rows claimed since the last vacuum. The
  //   bound is the parameter itself, not the tighter
  //   limit - k + 1: a LIMIT the planner cannot fold is guessed at a tenth of its input, and on a
  //   large table a tenth of the due rows priced the claim past `jit_above_cost` (a second of JIT
  //   compilation per poll) and kept the prepared statement on custom plans, planned again at
  //   every poll. So a poll of at most {@link CAPPED_LIMIT} rows (`capped`) reads each key
  //   through a constant LIMIT under the parameter's: the generic plan then costs about what a
  //   custom one does and the server keeps it, whatever the table's size. The outer LIMIT pulls
  //   only `limit` rows through the inner one, so no more are locked;
  // - `due`: round by round (a row's place in its key), keys by their turn, cut at `limit`.
  // MATERIALIZED: each part runs once. The UPDATE finds its rows by key from an array: joined to
  // the CTE, a generic plan may hash a scan of the table.
  const first = (narrow: string, next: string) => `SELECT fair_key, ${dueAt}, wake_at, id FROM ${t}
               WHERE ${narrow}wake_at IS NOT NULL${next} ORDER BY fair_key, ${dueAt}, wake_at, id LIMIT 1`;
  const fair = (narrow: string, capped: boolean) => `WITH RECURSIVE keys (k, at, w, head) AS (
             (${first(narrow, '')})
             UNION ALL
             SELECT n.* FROM keys CROSS JOIN LATERAL (${first(narrow, ' AND fair_key > keys.k')}) n),
           heads AS MATERIALIZED (SELECT k, at, w, head FROM keys WHERE at <= $1),
           chosen AS MATERIALIZED (
             SELECT h.k, GREATEST(h.at, s.served_at) AS at, h.at AS due, h.w, h.head
             FROM heads h LEFT JOIN ${served} s ON s.key = h.k ORDER BY 2, 1 LIMIT $3),
           picked AS MATERIALIZED (
             SELECT c.k, c.at, p.id, row_number() OVER (PARTITION BY c.k ORDER BY p.due, p.wake_at, p.id) AS turn
             FROM chosen c CROSS JOIN LATERAL (${capped ? 'SELECT * FROM (' : ''}
               SELECT id, ${dueAt} AS due, wake_at FROM ${t}
               WHERE ${narrow}wake_at IS NOT NULL AND fair_key = c.k AND ${dueAt} <= $1
                 AND (${dueAt}, wake_at, id) >= (c.due, c.w, c.head)
               ORDER BY ${dueAt}, wake_at, id
               LIMIT ${capped ? `${CAPPED_LIMIT}` : '$3'}
               FOR UPDATE SKIP LOCKED)${capped ? ' q LIMIT $3)' : ''} p),`;
  // Named ids (a notice's): few rows, by key, locked, then put in the fair order.
  const named = (narrow: string) => `WITH named AS MATERIALIZED (
             SELECT id, fair_key AS k, ${dueAt} AS due, wake_at FROM ${t}
             WHERE ${narrow}wake_at IS NOT NULL AND ${dueAt} <= $1
             FOR UPDATE SKIP LOCKED),
           picked AS MATERIALIZED (
             SELECT n.id, n.k, GREATEST(min(n.due) OVER (PARTITION BY n.k), s.served_at) AS at,
               row_number() OVER (PARTITION BY n.k ORDER BY n.due, n.wake_at, n.id) AS turn
             FROM named n LEFT JOIN ${served} s ON s.key = n.k),`;
  // The rows picked in the fair order, claimed; the keys handed out are served at `now` where keys
  // compete (one group alone writes nothing: a store without keys never writes `$fair`), in key
  // order so racing polls lock the `$fair` rows alike and never deadlock.
  const claim = (pick: string, compete: string, returning = '') => `${pick}
           due AS MATERIALIZED (
             SELECT id, row_number() OVER (ORDER BY turn, at, k) AS place FROM picked ORDER BY turn, at, k LIMIT $3),
           served AS (
             INSERT INTO ${served} AS f (key, served_at)
             SELECT DISTINCT p.k, $1 FROM picked p JOIN due USING (id)
             WHERE ${compete}
             ORDER BY p.k
             ON CONFLICT (key) DO UPDATE SET served_at = GREATEST(f.served_at, excluded.served_at)),
           claimed AS (
             UPDATE ${t} AS i SET claimed_until = $2, claim_token = $4 WHERE i.id = ANY(ARRAY(SELECT id FROM due))
             RETURNING i.id${returning})
         SELECT claimed.* FROM claimed JOIN due USING (id) ORDER BY due.place`;
  const json = ', COALESCE(i.snapshot_text, i.snapshot::text) AS json';
  // Whether keys compete: more than one has due work (of those named).
  const KEYS_DUE = '(SELECT count(*) FROM heads WHERE at IS NOT NULL) > 1';
  const KEYS_NAMED = '(SELECT count(DISTINCT k) FROM picked) > 1';
  const listDue = (capped: boolean) => ({
    all: claim(fair('', capped), KEYS_DUE),
    lane: claim(fair('workflow = $5 AND ', capped), KEYS_DUE),
  });
  const claimDue = (capped: boolean) => ({
    all: claim(fair('', capped), KEYS_DUE, json),
    lane: claim(fair('workflow = $5 AND ', capped), KEYS_DUE, json),
  });
  return {
    CREATE,
    CREATE_NOTIFY: notifying(CREATE, 11),
    save,
    /** listDue's statements by the limit's size: `capped` for a limit up to {@link CAPPED_LIMIT}. */
    LIST_DUE: { capped: listDue(true), open: listDue(false) },
    CLAIM_DUE: {
      /** claimDue's statements without named ids, by the limit's size as {@link LIST_DUE}'s. */
      capped: claimDue(true),
      open: claimDue(false),
      ids: claim(named('id = ANY($5::text[]) AND '), KEYS_NAMED, json),
      laneIds: claim(named('workflow = $5 AND id = ANY($6::text[]) AND '), KEYS_NAMED, json),
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
