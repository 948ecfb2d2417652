import type { FlowNeed, SaveFlow } from '@stepfold/engine';
import type { TableNames } from './setup.js';

// A short statement for the common shape of a flow call: concurrency counters only, at most one
// holder taken (on one counter) and at most one released (from one counter, the same or another):
// a task's attempt ending as the next task's begins, the first task's take, the last one's release.
// It reads those counters by primary key and locks them in the order every flow statement locks
// them, and writes only where the general statement (flow.ts) would write the same: on a counter
// with waiters, a take it cannot grant, or a release that would leave only lapsed holds, it writes
// nothing at all and says so (`fast` false), and the caller runs the general statement, which
// decides as it always does. Where it writes, it writes what the general statement would write.
// Its grant rule is the general statement's, written again for this shape: a change to one is a
// change to both (flow-fast.test.ts pins which statement ran for each case).

/** A call's counters and holders in the fast shape; null where the call has another. */
export interface FastShape {
  /** The holder released and the counter it holds on, or null. */
  release: { holder: string; scope: string; key: string } | null;
  /** The holder taken, on which counter, under which limit, until when; or null. */
  take: { holder: string; scope: string; key: string; limit: number; until: number } | null;
}

/** A concurrency need's counter (no period), or null. */
const concurrency = (n: FlowNeed | undefined) => (n && !n.periodMs ? n : null);

/** The fast shape of an acquire, or null when it has another. */
export function acquireShape(holder: string, needs: readonly FlowNeed[], until: number): FastShape | null {
  const n = needs.length === 1 ? concurrency(needs[0]) : null;
  if (!n) return null;
  return { release: null, take: { holder, scope: n.scope, key: n.key, limit: n.limit, until } };
}

/** The fast shape of a save's flow work, or null when it has another. */
export function saveShape(flow: SaveFlow): FastShape | null {
  const needs = flow.take?.needs ?? [];
  const gone = flow.release ?? [];
  if (needs.length > 1 || gone.length > 1) return null;
  const need = concurrency(needs[0]);
  if (needs.length && !need) return null;
  const on = flow.counters;
  if (gone.length && (on?.length !== 1 || on[0]!.period !== 0)) return null;
  const release = gone.length ? { holder: gone[0]!, scope: on![0]!.scope, key: on![0]!.key } : null;
  const take =
    flow.take && need
      ? {
          holder: flow.take.holder,
          scope: need.scope,
          key: need.key,
          limit: need.limit,
          until: flow.take.until,
        }
      : null;
  return release || take ? { release, take } : null;
}

/** The parameters of {@link fastFlowStatement} for `shape` at `now`. */
export const fastValues = ({ release, take }: FastShape, now: number): unknown[] => [
  now,
  release?.holder ?? null,
  release?.scope ?? null,
  release?.key ?? null,
  take?.holder ?? null,
  take?.scope ?? null,
  take?.key ?? null,
  take?.limit ?? null,
  take?.until ?? null,
];

/**
 * The fast statement: with `update` (the store's conditional UPDATE, `$1`-`$11`), a save whose
 * parameters follow from `$12` (see {@link fastValues}), then the NOTIFY payload (`$21`) with
 * `channel`; without, an acquire from `$1`. Answers whether the counter work was done here
 * (`fast`) and, for a save, whether the row was written.
 */
export function fastFlowStatement(names: TableNames, update: string | null, channel: string | null): string {
  const F = names.flow;
  const base = update === null ? 1 : 12;
  const types = ['bigint', 'text', 'text', 'text', 'text', 'text', 'text', 'int', 'bigint'];
  const [NOW, GONE, RS, RK, HOLDER, TS, TK, LIM, UNTIL] = types.map((t, i) => `$${base + i}::${t}`) as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const same = (a: string, b: string) =>
    `${a}.scope = ${b}.scope AND ${a}.key = ${b}.key AND ${a}.period = 0`;
  const liveIn = (h: string, cond: string) => `(SELECT count(*) FROM jsonb_each_text(${h}) e WHERE ${cond})`;
  // The counters, locked in key order; their holds once the release is counted (`rest`).
  const rows = `want AS (SELECT v.scope, v.key, bool_or(v.rel) AS rel, bool_or(v.tk) AS tk
        FROM (VALUES (${RS}, ${RK}, true, false), (${TS}, ${TK}, false, true)) v(scope, key, rel, tk)
        WHERE v.scope IS NOT NULL GROUP BY v.scope, v.key),
      c AS (SELECT w.rel, w.tk, f.scope, f.key, f.holds, f.waiting
        FROM (SELECT * FROM want ORDER BY scope COLLATE "C", key COLLATE "C") w
        CROSS JOIN LATERAL (SELECT f.* FROM ${F} f WHERE ${same('f', 'w')} FOR UPDATE) f),
      n AS (SELECT c.scope, c.key, c.tk, c.waiting, CASE WHEN c.rel THEN c.holds - ${GONE} ELSE c.holds END AS rest,
        c.rel AND c.holds ? ${GONE} AS had FROM c)`;
  // Not done here: a counter with waiters; a take refused (the holder holds no live slot and the
  // limit's worth of others do); a release leaving lapsed holds only (the general statement
  // deletes that row); a lease that ends before now.
  const checks = `bad AS (SELECT 1 FROM n WHERE n.waiting <> '{}' OR CASE WHEN n.tk
          THEN NOT COALESCE((n.rest->>${HOLDER})::bigint > ${NOW}, false)
            AND ${liveIn('n.rest', `e.key <> ${HOLDER} AND e.value::bigint > ${NOW}`)} >= ${LIM}
          ELSE n.rest <> '{}' AND ${liveIn('n.rest', `e.value::bigint > ${NOW}`)} = 0 END),
      ok AS (SELECT 1 AS one WHERE NOT EXISTS (SELECT 1 FROM bad)
        AND (${TS} IS NULL OR (${UNTIL} > ${NOW} AND (${LIM} > 0 OR EXISTS (SELECT 1 FROM n WHERE n.tk)))))`;
  const W = update === null ? 'ok' : 'w';
  const save = update === null ? '' : `w AS (${update} AND EXISTS (SELECT 1 FROM ok) RETURNING 1),`;
  // The taken counter's holds: lapsed holds of others dropped (only where there are any), the holder's lease set.
  const taken = `CASE WHEN ${liveIn('n.rest', `e.value::bigint <= ${NOW}`)} = 0 THEN n.rest
        ELSE COALESCE((SELECT jsonb_object_agg(e.key, e.value) FROM jsonb_each(n.rest) e
          WHERE e.key <> ${HOLDER} AND (e.value #>> '{}')::bigint > ${NOW}), '{}') END
        || jsonb_build_object(${HOLDER}, ${UNTIL})`;
  // Each write finds its row by the parameters (an index lookup whatever the planner believes of
  // the table's size), its holds in `n`: the released counter's when it is not the taken one.
  const at = (S: string, K: string) => `f.scope = ${S} AND f.key = ${K} AND f.period = 0`;
  const writes = `gone AS (DELETE FROM ${F} f USING n, ${W} WHERE ${at(RS, RK)} AND NOT n.tk AND n.rest = '{}'),
      freed AS (UPDATE ${F} f SET holds = n.rest FROM n, ${W}
        WHERE ${at(RS, RK)} AND NOT n.tk AND n.had AND n.rest <> '{}'),
      upd AS (UPDATE ${F} f SET holds = ${taken}, lim = ${LIM} FROM n, ${W} WHERE ${at(TS, TK)} AND n.tk),
      ins AS (INSERT INTO ${F} (scope, key, period, lim, holds, waiting)
        SELECT ${TS}, ${TK}, 0, ${LIM}, jsonb_build_object(${HOLDER}, ${UNTIL}), '{}' FROM ${W}
        WHERE ${TS} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM n WHERE n.tk))`;
  const head = `WITH ${rows},
      ${checks},
      ${save}
      ${writes}`;
  if (update === null) return `${head} SELECT EXISTS (SELECT 1 FROM ok) AS fast`;
  return `${head}
    SELECT EXISTS (SELECT 1 FROM w) AS written, EXISTS (SELECT 1 FROM ok) AS fast${
      channel === null ? '' : `, (SELECT pg_notify('${channel}', $${base + types.length}) FROM w) AS notified`
    }`;
}
