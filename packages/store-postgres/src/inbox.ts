import { finishedStatus, type InboxDriver, type SentRow } from '@stepfold/engine';
import { toInt8 } from './encode.js';
import type { Query } from './query.js';
import type { TableNames } from './setup.js';

// NOTIFY refuses a payload of 8000 bytes or more (the default build's limit).
const MAX_PAYLOAD_BYTES = 7999;

/**
 * The statements of the sent-signal inbox (`<table>$sent`). `SEND` appends a signal in one round
 * trip if the instance is live and on an accepted definition, and NOTIFYs in the same statement:
 * the snapshot and every signal waiting for it when they fit the payload limit (the worker that
 * hears it applies them with no claim and no load), else `"p":true` (claim them by id).
 */
export function inboxStatements(names: TableNames, channel: string) {
  const { qualified: t, sent } = names;
  const json = 'COALESCE(i.snapshot_text, i.snapshot::text)';
  // Each event as a JSON string of its stored text, not cast to json: a corrupt one would fail the
  // whole statement, where the store kit's parse fails only its own row.
  const waiting = (id: string) =>
    `(SELECT json_agg(json_build_object('n', x.seq, 'e', x.event) ORDER BY x.seq)::text FROM ${sent} x WHERE x.id = ${id})`;
  const head = `'{"at":' || $5::text || ',"w":' || to_json(ok.workflow)::text || ',"i":' || to_json(ok.id)::text`;
  // The snapshot goes with the notice only from the text column: a save matching it compares that
  // text by digest, and a row in the JSONB column has no text a store in 'text' mode could compare.
  // The definition is read from the snapshot only for rows not written since migration 6.
  // It answers `sent` (1 when appended) and the instance's `status` when on an accepted definition,
  // so a refusal for a finished instance needs no read to say so.
  const SEND = `WITH found AS (
      SELECT i.id, i.workflow, i.status, i.snapshot_text AS json FROM ${t} i
      WHERE i.id = $1
        AND COALESCE(i.definition, (SELECT w->>'name' || '@' || (w->>'version') || '@' || (w->>'hash')
             FROM (SELECT ${json}::jsonb->'workflow' AS w) AS d)) = ANY($3::text[])),
    ok AS (SELECT id, workflow, json FROM found
      WHERE status NOT IN ('completed', 'failed', 'cancelled', 'aborted')),
    a AS (INSERT INTO ${sent} (id, event, due_at) SELECT id, $2, $4 FROM ok RETURNING seq),
    p AS (SELECT ${head} || ',"s":' || ok.json || ',"p":[' ||
            (SELECT string_agg('{"n":' || q.seq || ',"e":' || q.event || '}', ',' ORDER BY q.seq)
             FROM (SELECT x.seq, x.event FROM ${sent} x WHERE x.id = $1
                   UNION ALL SELECT a.seq, $2 FROM a) AS q) || ']}' AS whole,
            ${head} || ',"p":true}' AS bare
          FROM ok),
    n AS (SELECT pg_notify('${channel}', CASE WHEN octet_length(whole) <= ${MAX_PAYLOAD_BYTES} THEN whole ELSE bare END)
      FROM p, a)
    SELECT (SELECT count(*) FROM n)::int AS sent, (SELECT status FROM found) AS status`;
  // The backstop: signals left over their grace, claimed (disjoint batches across workers).
  const CLAIM = `WITH c AS MATERIALIZED (
      SELECT seq FROM ${sent} WHERE due_at <= $1 AND (claimed_until IS NULL OR claimed_until <= $1)
      ORDER BY due_at, seq LIMIT $3 FOR UPDATE SKIP LOCKED),
    u AS (UPDATE ${sent} s SET claimed_until = $2 FROM c WHERE s.seq = c.seq RETURNING s.id)
    SELECT i.id, ${json} AS json, ${waiting('i.id')} AS sent FROM ${t} i WHERE i.id IN (SELECT id FROM u)`;
  // Named instances (a notice without the snapshot, or a take that lost its race): no claim, the
  // write that applies them is conditional on the version.
  const CLAIM_IDS = `SELECT i.id, ${json} AS json, ${waiting('i.id')} AS sent FROM ${t} i
    WHERE i.id = ANY($1::text[]) AND EXISTS (SELECT 1 FROM ${sent} x WHERE x.id = i.id)`;
  const DROP = `DELETE FROM ${sent} WHERE id = $1 AND seq = ANY($2::bigint[])
    AND EXISTS (SELECT 1 FROM ${t} WHERE id = $1 AND version = $3)`;
  return { SEND, CLAIM, CLAIM_IDS, DROP };
}

/** The inbox's database calls on the `<table>$sent` table: one statement each. */
export function pgInbox(query: Query, names: TableNames, channel: string): InboxDriver {
  const { SEND, CLAIM, CLAIM_IDS, DROP } = inboxStatements(names, channel);
  const rows = async (text: string, values: unknown[]): Promise<SentRow[]> => {
    const r = await query<{ json: string; sent: string | null }>(text, values);
    return r.rows.map(({ json, sent }) => ({
      json,
      sent: (JSON.parse(sent ?? '[]') as { n: number; e: string }[]).map((x) => ({ seq: x.n, event: x.e })),
    }));
  };
  return {
    async append(id, entry, accept) {
      const values = [id, entry.json, accept, toInt8(entry.dueAt), toInt8(entry.at)];
      const row = (await query<{ sent: number; status: string | null }>(SEND, values)).rows[0];
      if (row?.sent === 1) return true;
      return finishedStatus(row?.status) ?? false;
    },
    claim: (w) => rows(CLAIM, [toInt8(Math.floor(w.now)), toInt8(Math.floor(w.until)), w.limit]),
    claimIds: (ids) => rows(CLAIM_IDS, [ids]),
    async drop(id, seqs, version) {
      await query(DROP, [id, seqs, version]);
    },
  };
}
