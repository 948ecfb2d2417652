import type { StoredStreamEntry, StreamDriver } from '@stepfold/engine';
import { errorCode } from './map-error.js';
import type { Query } from './query.js';
import type { PgPool, TableNames } from './setup.js';
import { pgStreamNotices, type StreamNotices } from './stream-notices.js';

// The stream capability on two tables: `<table>$stream`, one row per instance stream (the offset
// after its last entry and the fences of its steps), and `<table>$chunk`, one row per entry
// (`data` NULL for a reset). An append is one statement: it locks the stream's row, decides on it
// (fenced, a reset, the next offsets), inserts the entries and moves the row, and NOTIFYs the
// instance id at commit. Appenders of one stream wait on the row lock, so entries commit in offset
// order and a reader never sees a later offset before an earlier one.

/** The stream statements on `names.stream` and `names.chunk`, notices on `channel`. */
export function streamStatements(names: TableNames, channel: string) {
  const S = names.stream;
  const C = names.chunk;
  // The entries to write after the stream's offset `p.next`: a reset first when one is due.
  const rows = `rows AS (
      SELECT p.next + (CASE WHEN p.reset THEN 1 ELSE 0 END) + c.ord - 1 AS seq, c.data
      FROM plan p, unnest($4::text[]) WITH ORDINALITY AS c(data, ord) WHERE NOT p.fenced
      UNION ALL SELECT p.next, NULL FROM plan p WHERE p.reset AND NOT p.fenced)`;
  // $1 instance, $2 step, $3 attempt, $4 chunks. No row: the stream has no row yet (APPEND_NEW).
  const APPEND = `WITH old AS (
      SELECT next, COALESCE((fences->>$2::text)::bigint, 0) AS fence FROM ${S} WHERE instance = $1 FOR UPDATE),
    plan AS (
      SELECT next, fence, fence > $3::bigint AS fenced, $3::bigint > GREATEST(fence, 1) AS reset FROM old),
    ${rows},
    ins AS (INSERT INTO ${C} (instance, seq, step, attempt, data) SELECT $1, seq, $2, $3, data FROM rows),
    upd AS (
      UPDATE ${S} s SET next = s.next + (SELECT count(*) FROM rows),
        fences = s.fences || jsonb_build_object($2::text, $3::bigint)
      WHERE s.instance = $1 AND EXISTS (SELECT 1 FROM rows) RETURNING s.next),
    note AS (SELECT pg_notify('${channel}', $1) FROM upd)
    SELECT p.next::text AS before, p.fence::text AS fence, p.fenced, (SELECT next FROM upd)::text AS after,
      (SELECT count(*) FROM note) AS noted
    FROM plan p`;
  // The same for a stream without a row: its first offset is after any entries left behind.
  const APPEND_NEW = `WITH plan AS (
      SELECT COALESCE((SELECT max(seq) + 1 FROM ${C} WHERE instance = $1), 0) AS next,
        false AS fenced, $3::bigint > 1 AS reset),
    ${rows},
    head AS (
      INSERT INTO ${S} (instance, next, fences)
      SELECT $1, p.next + (SELECT count(*) FROM rows), jsonb_build_object($2::text, $3::bigint) FROM plan p
      WHERE EXISTS (SELECT 1 FROM rows)
      ON CONFLICT (instance) DO NOTHING RETURNING next),
    ins AS (
      INSERT INTO ${C} (instance, seq, step, attempt, data)
      SELECT $1, seq, $2, $3, data FROM rows WHERE EXISTS (SELECT 1 FROM head)),
    note AS (SELECT pg_notify('${channel}', $1) FROM head)
    SELECT p.next::text AS before, (SELECT count(*) FROM rows)::int AS n, (SELECT next FROM head)::text AS after,
      (SELECT count(*) FROM note) AS noted
    FROM plan p`;
  // $1 instance, $2 from, $3 limit: the entries and the fences in one snapshot.
  const READ = `SELECT (SELECT fences FROM ${S} WHERE instance = $1) AS fences,
      (SELECT COALESCE(json_agg(json_build_array(c.seq, c.step, c.attempt, c.data) ORDER BY c.seq), '[]')
        FROM (SELECT seq, step, attempt, data FROM ${C} WHERE instance = $1 AND seq >= $2 ORDER BY seq LIMIT $3) c)
        AS entries`;
  const REMOVE = `WITH s AS (DELETE FROM ${S} WHERE instance = $1) DELETE FROM ${C} WHERE instance = $1`;
  const NEXT = `SELECT next::text AS next FROM ${S} WHERE instance = $1`;
  return { APPEND, APPEND_NEW, READ, REMOVE, NEXT };
}

/** The stream driver, and the notices its tails wait on (closed with the store). */
export function pgStream(
  query: Query,
  names: TableNames,
  channel: string,
  listenPool: PgPool,
): StreamDriver & { notices: StreamNotices } {
  const { APPEND, APPEND_NEW, READ, REMOVE, NEXT } = streamStatements(names, channel);
  const next = async (instance: string) => {
    const row = (await query<{ next: string }>(NEXT, [instance])).rows[0];
    return row ? Number(row.next) : 0;
  };
  const notices = pgStreamNotices(listenPool, channel, next);
  return {
    notices,
    async append(instance, step, attempt, chunks) {
      const values = [instance, step, attempt, chunks];
      for (let tries = 1; ; tries++) {
        const old = (
          await query<{ before: string; fence: string; fenced: boolean; after: string | null }>(
            APPEND,
            values,
          )
        ).rows[0];
        if (old) {
          if (old.fenced) return { fenced: Number(old.fence) };
          return Number(old.after ?? old.before);
        }
        try {
          const made = (await query<{ before: string; n: number; after: string | null }>(APPEND_NEW, values))
            .rows[0]!;
          if (made.n === 0) return Number(made.before);
          if (made.after !== null) return Number(made.after);
        } catch (e) {
          // Entries left behind at those offsets by a racing delete: read the stream again.
          if (errorCode(e) !== '23505' || tries > 10) throw e;
        }
        // Another append made the stream's row first: take the locking path.
        if (tries > 10) throw new Error(`postgres stream: ${instance} kept changing under its first append`);
      }
    },
    async read(instance, from, limit) {
      const row = (
        await query<{
          fences: Record<string, number> | null;
          entries: Array<[number, string, number, string | null]>;
        }>(READ, [instance, from, limit])
      ).rows[0]!;
      const entries: StoredStreamEntry[] = row.entries.map(([offset, step, attempt, data]) => ({
        offset: Number(offset),
        step,
        attempt: Number(attempt),
        data,
      }));
      return { entries, fences: row.fences ?? {} };
    },
    async remove(instance) {
      await query(REMOVE, [instance]);
    },
    wait: (instance, from, ms, signal) => notices.wait(instance, from, ms, signal),
  };
}
