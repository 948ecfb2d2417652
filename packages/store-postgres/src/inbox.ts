import {
  SENT_CLAIM_AFTER_MS,
  type SentDue,
  type SentSignal,
  type StoreKit,
  type WorkflowEvent,
} from '@stepfold/engine';
import { toInt8 } from './encode.js';
import type { TableNames } from './setup.js';

// NOTIFY refuses a payload of 8000 bytes or more (the default build's limit).
const MAX_PAYLOAD_BYTES = 7999;

/** Runs one statement of the store (prepared, guarded, errors mapped). */
type Query = <R>(
  what: string,
  text: string,
  values: unknown[],
) => Promise<{ rows: R[]; rowCount: number | null }>;

/**
 * The statements of the sent-signal inbox (`<table>$sent`). `SEND` appends a signal in one round
 * trip if the instance is live and on an accepted definition, and NOTIFYs in the same statement:
 * the snapshot and every signal waiting for it when they fit the payload limit (the worker that
 * hears it applies them with no claim and no load), else `"p":true` (claim them by id).
 */
export function inboxStatements(names: TableNames, channel: string) {
  const { qualified: t, sent } = names;
  const json = 'COALESCE(i.snapshot_text, i.snapshot::text)';
  const waiting = (id: string) =>
    `(SELECT json_agg(json_build_object('n', x.seq, 'e', x.event::json) ORDER BY x.seq)::text FROM ${sent} x WHERE x.id = ${id})`;
  const head = `'{"at":' || $5::text || ',"w":' || to_json(ok.workflow)::text || ',"i":' || to_json(ok.id)::text`;
  const SEND = `WITH ok AS (
      SELECT i.id, i.workflow, ${json} AS json FROM ${t} i
      WHERE i.id = $1 AND i.status NOT IN ('completed', 'failed', 'cancelled', 'aborted')
        AND (SELECT w->>'name' || '@' || (w->>'version') || '@' || (w->>'hash')
             FROM (SELECT ${json}::jsonb->'workflow' AS w) AS d) = ANY($3::text[])),
    a AS (INSERT INTO ${sent} (id, event, due_at) SELECT id, $2, $4 FROM ok RETURNING seq),
    p AS (SELECT ${head} || ',"s":' || ok.json || ',"p":[' ||
            (SELECT string_agg('{"n":' || q.seq || ',"e":' || q.event || '}', ',' ORDER BY q.seq)
             FROM (SELECT x.seq, x.event FROM ${sent} x WHERE x.id = $1
                   UNION ALL SELECT a.seq, $2 FROM a) AS q) || ']}' AS whole,
            ${head} || ',"p":true}' AS bare
          FROM ok)
    SELECT pg_notify('${channel}', CASE WHEN octet_length(whole) <= ${MAX_PAYLOAD_BYTES} THEN whole ELSE bare END)
    FROM p, a`;
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

/**
 * A save that also removes the sent signals it applied (`$9`, bigint[]), only if its own
 * condition held; `notify` adds the NOTIFY of the save (its payload `$10`).
 */
export function consumingSave(save: string, names: TableNames, channel: string, notify: boolean): string {
  return `WITH w AS (${save} RETURNING 1),
    d AS (DELETE FROM ${names.sent} WHERE id = $1 AND seq = ANY($9::bigint[]) AND EXISTS (SELECT 1 FROM w))
    SELECT ${notify ? `pg_notify('${channel}', $10)` : '1'} FROM w`;
}

/** `Store.send`, `claimSent` and `dropSent` of a PostgreSQL store. */
export function inboxMethods(
  kit: StoreKit,
  query: Query,
  names: TableNames,
  channel: string,
  claimMs: number,
) {
  const { SEND, CLAIM, CLAIM_IDS, DROP } = inboxStatements(names, channel);
  const due = (rows: { id: string; json: string; sent: string | null }[]): SentDue[] =>
    rows.flatMap((r) => {
      const waiting = JSON.parse(r.sent ?? '[]') as { n: number; e: WorkflowEvent }[];
      if (waiting.length === 0) return []; // applied meanwhile
      const sent: SentSignal[] = waiting.map((x) => ({ seq: x.n, event: x.e }));
      return [{ snapshot: kit.decode(r.json), sent }];
    });
  return {
    async send(id: string, event: WorkflowEvent, accept: readonly string[]): Promise<boolean> {
      const at = Math.floor(event.at);
      const r = await query('send', SEND, [
        kit.id(id),
        JSON.stringify(event),
        [...accept],
        toInt8(at + SENT_CLAIM_AFTER_MS),
        toInt8(at),
      ]);
      return r.rowCount === 1;
    },
    async claimSent(now: number, limit: number, ids?: readonly string[]): Promise<SentDue[]> {
      if (ids !== undefined) {
        const list = Array.from(ids, (x) => kit.id(x));
        if (list.length === 0) return [];
        const r = await query<{ id: string; json: string; sent: string | null }>('claimSent', CLAIM_IDS, [
          list,
        ]);
        return due(r.rows);
      }
      const n = kit.dueLimit(now, limit);
      if (n === null) return [];
      const at = Math.floor(now);
      const r = await query<{ id: string; json: string; sent: string | null }>('claimSent', CLAIM, [
        toInt8(at),
        toInt8(at + claimMs),
        n,
      ]);
      return due(r.rows);
    },
    async dropSent(id: string, seqs: readonly number[], version: number): Promise<void> {
      if (seqs.length === 0) return;
      await query('dropSent', DROP, [kit.id(id), kit.seqs(seqs), version]);
    },
  };
}
