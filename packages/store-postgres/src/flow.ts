import type { FlowCounterRef, FlowDriver, FlowGrant, FlowKeyState } from '@stepfold/engine';
import { acquireShape, fastFlowStatement, fastValues } from './flow-fast.js';
import { errorCode } from './map-error.js';
import type { Query } from './query.js';
import type { TableNames } from './setup.js';

// The flow capability on `<table>$flow`: one row per counter (scope, key, period; period 0 is a
// concurrency counter), its entries in two JSONB objects: `holds` maps a holder to its lease end
// (concurrency) or its start (rate), `waiting` maps a holder to [instance, since]. An entry of
// either kind counts while `value + period > now`, so one expression serves both.
//
// Each call is one statement. The rows it reads are locked first (FOR UPDATE, in key order, so
// two calls never wait on each other in a circle) and READ COMMITTED re-reads a row that changed
// while the lock was awaited, so the decision is taken on the latest entries. A counter that does
// not exist yet is inserted by the acquire that grants it; two acquires creating one counter at
// once: the second fails on the primary key, writing nothing, and is run again.

/**
 * A condition always true of an ordinality that the planner, knowing nothing of it, takes to keep
 * one row in two hundred: so it counts the needs and counters of a call as one or two rows, not
 * ten, and finds each counter by its primary key in a nested loop rather than hashing a scan of
 * the whole table (which a generic plan made while the table was small kept doing as it grew).
 */
const FEW = (ord: string) => `${ord} BETWEEN 1 AND 2147483647`;

/**
 * The needs from the four arrays `$first`-`$first+3` (scopes, keys, periods, limits), as
 * `n(scope, key, period, lim, ord)` rows. The arrays are read behind a fence (`OFFSET 0`) so the
 * planner counts their rows the same way whatever they hold: a plan for the values at hand then
 * costs what the prepared statement's generic plan costs, and the server keeps the generic plan
 * instead of planning these long statements again on every call.
 */
const needs = (first: number) =>
  `SELECT n.* FROM (SELECT $${first}::text[] AS s, $${first + 1}::text[] AS k, $${first + 2}::bigint[] AS p,
        $${first + 3}::int[] AS l OFFSET 0) a
      CROSS JOIN LATERAL unnest(a.s, a.k, a.p, a.l) WITH ORDINALITY AS n(scope, key, period, lim, ord)
      WHERE ${FEW('n.ord')}`;

/**
 * The counters named by the three arrays `$first`-`$first+2` (scopes, keys, periods), as
 * `c(scope, key, period)` rows, behind a fence as in {@link needs}.
 */
const refs = (first: number) =>
  `SELECT c.scope, c.key, c.period FROM (SELECT $${first}::text[] AS s, $${first + 1}::text[] AS k, $${first + 2}::bigint[] AS p OFFSET 0) a
      CROSS JOIN LATERAL unnest(a.s, a.k, a.p) WITH ORDINALITY AS c(scope, key, period, ord) WHERE ${FEW('c.ord')}`;

/** Whether the counter row `f` counts any of the holders `gone`: a hold of a concurrency counter, or a waiter. */
const counts = (f: string, gone: string) =>
  `((${f}.period = 0 AND ${f}.holds ?| ${gone}) OR (${f}.waiting <> '{}' AND ${f}.waiting ?| ${gone}))`;

/**
 * The rows of `F` named by `targets` (rows of scope, key, period and `needed`), each read by its
 * primary key and locked (FOR UPDATE) in key order: a row not `needed` is locked only when `keep`
 * holds for it. One index lookup per counter in a nested loop, whatever the planner believes of
 * the table's size: a join it may hash would read the whole table (a plan made while the table was
 * small, kept as the generic plan, read it at every call once it had grown).
 */
const lockedRows = (F: string, targets: string, keep: string | null) =>
  `SELECT f.scope, f.key, f.period, f.lim, f.holds, f.waiting
      FROM (SELECT t.scope, t.key, t.period, bool_or(t.needed) AS needed FROM (${targets}) t
        GROUP BY t.scope, t.key, t.period ORDER BY t.scope COLLATE "C", t.key COLLATE "C", t.period) r
      CROSS JOIN LATERAL (SELECT f.* FROM ${F} f
        WHERE f.scope = r.scope AND f.key = r.key AND f.period = r.period${keep === null ? '' : ` AND (r.needed OR ${keep})`}
        FOR UPDATE) f`;

/**
 * Whether the counter `n` (as a statement will write it) is left with nothing at `now`, so its row
 * is deleted: no live hold, no start of the last two periods (a rate's row outlives its last start
 * by two periods, for callers whose `now` lags), no waiter.
 */
const ended = (n: string, now: string) =>
  `NOT EXISTS (SELECT 1 FROM jsonb_each_text(${n}.holds) e WHERE e.value::bigint + 2 * ${n}.period > ${now})
      AND ${n}.waiting = '{}'`;

/** The counters of `refs` as their arrays' parameters: scopes, keys, periods. */
export const refValues = (at: readonly FlowCounterRef[]) => [
  at.map((c) => c.scope),
  at.map((c) => c.key),
  at.map((c) => c.period),
];

/**
 * Parameters read as one-row subqueries (run once per call): the planner sees no value in them, so
 * like the arrays of {@link needs} they cost a plan for the values at hand what they cost the
 * generic plan.
 */
const fenced = <T extends string[]>(...params: T) =>
  params.map((p) => `(SELECT ${p})`) as { [K in keyof T]: string };

/** Live entries of `holds` at `$now` besides `$holder`, as `e(key, value)` rows. */
const live = (holds: string, period: string, holder: string, now: string) =>
  `jsonb_each_text(${holds}) e WHERE e.key <> ${holder} AND e.value::bigint + ${period} > ${now}`;

/** The flow statements on `names.flow`. */
export function flowStatements(names: TableNames) {
  const F = names.flow;
  const same = (a: string, b: string) =>
    `(${a}.scope, ${a}.key, ${a}.period) = (${b}.scope, ${b}.key, ${b}.period)`;
  // $1 holder, $2 instance, $3-$6 the needs (scopes, keys, periods, limits), $7 now, $8 until.
  // Answers one row: the first unmet need's place (null when granted), what it counted, and until when.
  const [HOLDER, INSTANCE, NOW, UNTIL] = fenced('$1::text', '$2::text', '$7::bigint', '$8::bigint');
  const ACQUIRE = `WITH need AS (${needs(3)}),
    locked AS (${lockedRows(F, 'SELECT scope, key, period, true AS needed FROM need', null)}),
    state AS (
      SELECT n.scope, n.key, n.period, n.lim, n.ord, l.scope IS NOT NULL AS found,
        COALESCE(l.holds, '{}') AS holds,
        COALESCE((l.holds->>${HOLDER})::bigint + n.period > ${NOW}, false) AS mine,
        c.live, c.vals
      FROM need n LEFT JOIN locked l USING (scope, key, period)
      CROSS JOIN LATERAL (SELECT count(*)::int AS live, array_agg(e.value::bigint ORDER BY e.value::bigint) AS vals
        FROM ${live('l.holds', 'n.period', HOLDER, NOW)}) c),
    unmet AS (SELECT * FROM state WHERE NOT mine AND live >= lim ORDER BY ord LIMIT 1),
    granted AS (
      SELECT s.scope, s.key, s.period, s.lim, s.found,
        COALESCE((SELECT jsonb_object_agg(x.k, x.v) FROM (
            SELECT e.key AS k, e.value::bigint AS v,
              row_number() OVER (ORDER BY e.value::bigint DESC, e.key COLLATE "C" DESC) AS rn
            FROM jsonb_each_text(s.holds) e WHERE e.key <> ${HOLDER}
              AND e.value::bigint + CASE WHEN s.period = 0 THEN 0 ELSE 2 * s.period END > ${NOW}) x
          -- A rate keeps its starts of the last two periods, not only those of this caller's
          -- window: a caller whose \`now\` lags another's (a process that read its clock a moment
          -- before a later caller wrote) must still count every start of its own window.
          WHERE s.period = 0 OR x.rn < 2 * s.lim), '{}')
        || jsonb_build_object(${HOLDER}, CASE WHEN s.period = 0 THEN ${UNTIL}
             WHEN s.mine THEN (s.holds->>${HOLDER})::bigint ELSE ${NOW} END) AS holds
      FROM state s WHERE NOT EXISTS (SELECT 1 FROM unmet)),
    upd AS (
      UPDATE ${F} f SET holds = g.holds, waiting = f.waiting - ${HOLDER}, lim = g.lim
      FROM granted g WHERE g.found AND ${same('f', 'g')}),
    ins AS (
      INSERT INTO ${F} (scope, key, period, lim, holds, waiting)
      SELECT scope, key, period, lim, holds, '{}' FROM granted WHERE NOT found
      ORDER BY scope, key, period),
    wait AS (
      UPDATE ${F} f SET lim = u.lim, waiting = CASE WHEN f.waiting ? ${HOLDER} THEN f.waiting
          ELSE f.waiting || jsonb_build_object(${HOLDER}, jsonb_build_array(${INSTANCE}, ${NOW})) END
      FROM unmet u WHERE ${same('f', 'u')})
    SELECT u.ord, u.live, u.vals[u.live - u.lim + 1] + u.period AS until
    FROM (SELECT 1) AS one LEFT JOIN unmet u ON true`;

  // $1 holders, $2 now; RELEASE_AT: $3-$5 the counters to look on (by primary key). Without them,
  // every counter is read (no index finds a holder). Answers the instances to wake, oldest first.
  // A rate's row outlives its last start by two periods, for callers whose `now` lags (see ACQUIRE).
  const release = (rows: string) => `WITH locked AS (${rows}),
    next AS (
      SELECT l.scope, l.key, l.period, l.lim, l.waiting - $1::text[] AS waiting,
        CASE WHEN l.period = 0 THEN l.holds - $1::text[] ELSE l.holds END AS holds,
        CASE WHEN l.period = 0 THEN (SELECT count(*)::int FROM jsonb_object_keys(l.holds) k WHERE k = ANY($1::text[]))
          ELSE 0 END AS freed
      FROM locked l),
    woken AS (
      SELECT w.* FROM next n CROSS JOIN LATERAL (
        SELECT e.key COLLATE "C" AS holder, e.value->>0 AS instance, (e.value->>1)::bigint AS since
        FROM jsonb_each(n.waiting) e ORDER BY since, holder
        LIMIT GREATEST(0, LEAST(n.freed, n.lim -
          (SELECT count(*) FROM jsonb_each_text(n.holds) h WHERE h.value::bigint > $2::bigint)))) w
      WHERE n.freed > 0),
    gone AS (DELETE FROM ${F} f USING next n WHERE ${same('f', 'n')} AND ${ended('n', '$2::bigint')}),
    upd AS (
      UPDATE ${F} f SET holds = n.holds, waiting = n.waiting FROM next n
      WHERE ${same('f', 'n')} AND NOT (${ended('n', '$2::bigint')}))
    SELECT instance FROM woken GROUP BY instance ORDER BY min(since), min(holder)`;
  const GONE = '$1::text[]';
  const RELEASE = release(`SELECT f.scope, f.key, f.period, f.lim, f.holds, f.waiting FROM ${F} f
      WHERE ${counts('f', GONE)} ORDER BY f.scope, f.key, f.period FOR UPDATE`);
  const RELEASE_AT = release(
    lockedRows(F, `SELECT c.*, false AS needed FROM (${refs(3)}) c`, counts('f', GONE)),
  );

  // $1 holders, $2 until; RENEW_AT: $3-$5 the counters to look on.
  const HOLDS = 'f.period = 0 AND f.holds ?| $1::text[]';
  const renew = (rows: string) => `WITH locked AS (${rows})
    UPDATE ${F} f SET holds = f.holds || (SELECT jsonb_object_agg(k, $2::bigint)
      FROM jsonb_object_keys(f.holds) k WHERE k = ANY($1::text[]))
    FROM locked l WHERE ${same('f', 'l')}`;
  const RENEW = renew(`SELECT f.scope, f.key, f.period FROM ${F} f WHERE ${HOLDS}
      ORDER BY f.scope, f.key, f.period FOR UPDATE`);
  const RENEW_AT = renew(lockedRows(F, `SELECT c.*, false AS needed FROM (${refs(3)}) c`, `(${HOLDS})`));

  // $1 scope or null, $2-$4 the counter to start after (null: from the first), $5 rows, $6 now.
  const LIST = `SELECT f.scope, f.key, f.period::text AS period, f.lim,
      (SELECT COALESCE(json_agg(json_build_object('holder', e.key, 'until', e.value::bigint + f.period)
          ORDER BY e.value::bigint, e.key COLLATE "C"), '[]')
        FROM jsonb_each_text(f.holds) e WHERE e.value::bigint + f.period > $6::bigint) AS holders,
      (SELECT COALESCE(json_agg(json_build_object('holder', e.key, 'instance', e.value->>0,
          'since', (e.value->>1)::bigint) ORDER BY (e.value->>1)::bigint, e.key COLLATE "C"), '[]')
        FROM jsonb_each(f.waiting) e) AS waiting
    FROM ${F} f
    WHERE ($1::text IS NULL OR f.scope = $1::text)
      AND ($2::text IS NULL OR (f.scope, f.key, f.period) > ($2::text, $3::text, $4::bigint))
      AND (f.waiting <> '{}' OR EXISTS (SELECT 1 FROM jsonb_each_text(f.holds) e
        WHERE e.value::bigint + f.period > $6::bigint))
    ORDER BY f.scope, f.key, f.period LIMIT $5::int`;
  return { ACQUIRE, RELEASE, RELEASE_AT, RENEW, RENEW_AT, LIST };
}

/**
 * The save `update` (the store's conditional UPDATE, `$1`-`$11`) with its flow work in the same
 * statement (`UpdateCondition.flow`): `$19` holders released as RELEASE releases them, then the
 * holder `$12` taken for the needs `$13`-`$16` as ACQUIRE takes it (no needs: no take), at `$17`
 * now, held until `$18`; with `at`, the counters the released holders are on `$20`-`$22` (read by
 * primary key; without, every counter is read); with `channel`, the NOTIFY payload next (`$20` or
 * `$23`). Every counter either touches is locked first, in key order, as every flow statement locks them. The row is updated only when the
 * take's needs are met once the release is counted, and the counters are written only when the row
 * was; a need not met writes nothing, not even a waiter entry (the runner asks ACQUIRE then).
 * Answers one row: whether the row was written, whether a need was not met, and the instances the
 * release woke.
 */
export function savingFlowStatement(
  names: TableNames,
  update: string,
  channel: string | null,
  at: boolean,
): string {
  const F = names.flow;
  const [HOLDER, NOW, UNTIL, GONE] = fenced('$12::text', '$17::bigint', '$18::bigint', '$19::text[]');
  const same = (a: string, b: string) =>
    `(${a}.scope, ${a}.key, ${a}.period) = (${b}.scope, ${b}.key, ${b}.period)`;
  return `WITH need AS (${needs(13)}),
    locked AS (${
      at
        ? lockedRows(
            F,
            `SELECT scope, key, period, true AS needed FROM need
          UNION ALL SELECT c.*, false FROM (${refs(20)}) c`,
            counts('f', GONE),
          )
        : `SELECT f.scope, f.key, f.period, f.lim, f.holds, f.waiting FROM ${F} f
      WHERE (f.scope, f.key, f.period) IN (SELECT scope, key, period FROM need) OR ${counts('f', GONE)}
      ORDER BY f.scope, f.key, f.period FOR UPDATE`
    }),
    freed AS (
      SELECT l.scope, l.key, l.period, l.lim, l.waiting - ${GONE} AS waiting,
        CASE WHEN l.period = 0 THEN l.holds - ${GONE} ELSE l.holds END AS holds,
        CASE WHEN l.period = 0 THEN (SELECT count(*)::int FROM jsonb_object_keys(l.holds) k WHERE k = ANY(${GONE}::text[]))
          ELSE 0 END AS freed
      FROM locked l),
    woken AS (
      SELECT w.* FROM freed n CROSS JOIN LATERAL (
        SELECT e.key COLLATE "C" AS holder, e.value->>0 AS instance, (e.value->>1)::bigint AS since
        FROM jsonb_each(n.waiting) e ORDER BY since, holder
        LIMIT GREATEST(0, LEAST(n.freed, n.lim -
          (SELECT count(*) FROM jsonb_each_text(n.holds) h WHERE h.value::bigint > ${NOW})))) w
      WHERE n.freed > 0),
    state AS (
      SELECT n.scope, n.key, n.period, n.lim, f.scope IS NOT NULL AS found,
        COALESCE(f.holds, '{}') AS holds,
        COALESCE((f.holds->>${HOLDER})::bigint + n.period > ${NOW}, false) AS mine,
        (SELECT count(*)::int FROM ${live('f.holds', 'n.period', HOLDER, NOW)}) AS live
      FROM need n LEFT JOIN freed f USING (scope, key, period)),
    unmet AS (SELECT 1 FROM state WHERE NOT mine AND live >= lim LIMIT 1),
    w AS (${update} AND NOT EXISTS (SELECT 1 FROM unmet) RETURNING 1),
    granted AS (
      SELECT s.scope, s.key, s.period, s.lim, s.found,
        COALESCE((SELECT jsonb_object_agg(x.k, x.v) FROM (
            SELECT e.key AS k, e.value::bigint AS v,
              row_number() OVER (ORDER BY e.value::bigint DESC, e.key COLLATE "C" DESC) AS rn
            FROM jsonb_each_text(s.holds) e WHERE e.key <> ${HOLDER}
              AND e.value::bigint + CASE WHEN s.period = 0 THEN 0 ELSE 2 * s.period END > ${NOW}) x
          WHERE s.period = 0 OR x.rn < 2 * s.lim), '{}')
        || jsonb_build_object(${HOLDER}, CASE WHEN s.period = 0 THEN ${UNTIL}
             WHEN s.mine THEN (s.holds->>${HOLDER})::bigint ELSE ${NOW} END) AS holds
      FROM state s WHERE EXISTS (SELECT 1 FROM w)),
    final AS (
      SELECT f.scope, f.key, f.period, COALESCE(g.lim, f.lim) AS lim, COALESCE(g.holds, f.holds) AS holds,
        CASE WHEN g.scope IS NULL THEN f.waiting ELSE f.waiting - ${HOLDER} END AS waiting
      FROM freed f LEFT JOIN granted g USING (scope, key, period)
      WHERE EXISTS (SELECT 1 FROM w)),
    gone AS (DELETE FROM ${F} f USING final n WHERE ${same('f', 'n')} AND ${ended('n', NOW)}),
    upd AS (
      UPDATE ${F} f SET holds = n.holds, waiting = n.waiting, lim = n.lim FROM final n
      WHERE ${same('f', 'n')} AND NOT (${ended('n', NOW)})
        AND (f.holds, f.waiting, f.lim) IS DISTINCT FROM (n.holds, n.waiting, n.lim)),
    ins AS (
      INSERT INTO ${F} (scope, key, period, lim, holds, waiting)
      SELECT scope, key, period, lim, holds, '{}' FROM granted WHERE NOT found
      ORDER BY scope, key, period)
    SELECT EXISTS (SELECT 1 FROM w) AS written, EXISTS (SELECT 1 FROM unmet) AS refused,
      (SELECT array_agg(x.instance ORDER BY x.since, x.holder) FROM (
        SELECT instance, min(since) AS since, min(holder) AS holder FROM woken GROUP BY instance) x) AS woken${
          channel === null ? '' : `, (SELECT pg_notify('${channel}', $${at ? 23 : 20}) FROM w) AS notified`
        }`;
}

// unique_violation (a counter another acquire created meanwhile), deadlock_detected (which the
// ordered locks avoid, but a server may still report one where inserts meet): run the call again.
const RETRY_CODES = new Set(['23505', '40P01']);
const MAX_TRIES = 20;

/**
 * Runs `call` again while it fails on a counter another call created or a deadlock (see
 * RETRY_CODES). Not async: a try is `call`'s promise and one `then` (every flow save goes here).
 */
export function retried<T>(call: () => Promise<T>, tries = 1): Promise<T> {
  let first: Promise<T>;
  try {
    first = call();
  } catch (e) {
    first = Promise.reject(e);
  }
  return first.then(undefined, (e: unknown) => {
    if (tries < MAX_TRIES && RETRY_CODES.has(errorCode(e) ?? '')) return retried(call, tries + 1);
    throw e;
  });
}

/** The flow calls on `<table>$flow`: one statement each. */
export function pgFlow(query: Query, names: TableNames): FlowDriver {
  const { ACQUIRE, RELEASE, RELEASE_AT, RENEW, RENEW_AT, LIST } = flowStatements(names);
  const FAST_ACQUIRE = fastFlowStatement(names, 'take', null, null);
  return {
    inUpdate: true,
    inInsert: true,
    async acquire(holder, instance, needs, now, until): Promise<FlowGrant> {
      // One concurrency need: the short statement grants it where it can (flow-fast.ts).
      const shape = acquireShape(holder, needs, until);
      if (shape) {
        const r = await retried(() => query<{ fast: boolean }>(FAST_ACQUIRE, fastValues('take', shape, now)));
        if (r.rows[0]?.fast) return { granted: true };
      }
      const values = [
        holder,
        instance,
        needs.map((n) => n.scope),
        needs.map((n) => n.key),
        needs.map((n) => n.periodMs ?? 0),
        needs.map((n) => n.limit),
        now,
        until,
      ];
      const row = (
        await retried(() =>
          query<{ ord: string | null; live: number | null; until: string | null }>(ACQUIRE, values),
        )
      ).rows[0];
      if (!row || row.ord === null) return { granted: true };
      return {
        granted: false,
        need: needs[Number(row.ord) - 1]!,
        until: row.until === null ? null : Number(row.until),
        count: row.live ?? 0,
      };
    },
    async release(holders, now, at) {
      const r = await query<{ instance: string }>(
        at ? RELEASE_AT : RELEASE,
        at ? [holders, now, ...refValues(at)] : [holders, now],
      );
      return r.rows.map((x) => x.instance);
    },
    async renew(holders, until, at) {
      await query(at ? RENEW_AT : RENEW, at ? [holders, until, ...refValues(at)] : [holders, until]);
    },
    async list(args) {
      const { after } = args;
      const r = await query<{
        scope: string;
        key: string;
        period: string;
        lim: number;
        holders: FlowKeyState['holders'];
        waiting: FlowKeyState['waiting'];
      }>(LIST, [
        args.scope ?? null,
        after?.scope ?? null,
        after?.key ?? null,
        after?.period ?? null,
        args.limit + 1,
        args.now,
      ]);
      return r.rows.map((x) => {
        const period = Number(x.period);
        return {
          scope: x.scope,
          key: x.key,
          limit: x.lim,
          ...(period ? { periodMs: period } : {}),
          holders: x.holders,
          waiting: x.waiting,
        };
      });
    },
  };
}
