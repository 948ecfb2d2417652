import type { FlowNeed, SaveFlow } from '@stepfold/engine';
import type { TableNames } from './setup.js';

// A short statement for the common shape of a flow call: concurrency counters only, at most one
// holder taken (on one counter) and at most one released (from one counter, the same or another):
// a task's attempt ending as the next task's begins, the first task's take, the last one's release.
// It reads those counters by primary key and locks them in the order every flow statement locks
// them, and writes only where the general statement (flow.ts) would write the same: on a counter
// with waiters, a take it cannot grant, a take on a counter holding lapsed holds of others, or a
// release that would leave only lapsed holds, it writes nothing at all and says so (`fast` false),
// and the caller runs the general statement, which decides as it always does. Where it writes, it
// writes what the general statement would write.
// Its grant rule is the general statement's, written again for this shape: a change to one is a
// change to both (flow-fast.test.ts pins which statement ran for each case).
//
// Each shape has a text of its own (see FastKind), and each text has as few plan nodes as it can:
// the server sets up every node of a plan at every call, and for these statements that set-up cost
// more than running them. So no grouping, sorting or counting subquery: the counts are jsonpath
// calls, the two counters of a move come sorted from JS (in the "C" order every flow statement
// locks in), and each write is gated by what was read (a one-time filter: a write that does not
// apply reads no index).
//
// Other shapes of a move, measured by the backend's CPU (bench/src/move-cpu.ts), saved nothing: a
// PL/pgSQL function doing the counter work (even with the instance's UPDATE inside) costs as much,
// its call taking about what its once-planned statements save in set-up; counts kept in scalar
// columns cannot gain here, since in the common move (the released counter emptied, the taken one
// not there) every check stops at its first comparison, and even no checks and no locks at all
// stayed within the noise; writes testing the locked row itself (no one-time filter), the two
// counters read by an array or by two scans, and the take as an upsert each cost more. What is left
// is the two writes and the statement's set-up, which a move with no read or check at all still pays.

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

/** Which text of the short statement a shape takes. */
export type FastKind =
  /** A release and a take on the same counter. */
  | 'handoff'
  /** A release on one counter, a take on another. */
  | 'move'
  | 'release'
  | 'take';

/** The kind of `shape`. */
export function fastKind({ release, take }: FastShape): FastKind {
  if (release && take) return release.scope === take.scope && release.key === take.key ? 'handoff' : 'move';
  return release ? 'release' : 'take';
}

/**
 * How `a` sorts against `b` in the "C" collation (by code point, as their UTF-8 bytes sort): UTF-16
 * code units sort the same except surrogates, which stand for code points above every other unit.
 */
export function cOrder(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const lift = (u: number) => (u >= 0xd800 && u <= 0xdfff ? u + 0x2000 : u >= 0xe000 ? u - 0x800 : u);
    return lift(x) - lift(y);
  }
  return a.length - b.length;
}

/**
 * The parameters of {@link fastFlowStatement} of `kind` for `shape` at `now`; a move's two counters
 * again at the end in key order (scope, then key), the order it locks them in.
 */
export function fastValues(kind: FastKind, { release, take }: FastShape, now: number): unknown[] {
  const values: unknown[] = [now];
  if (release && kind !== 'handoff') values.push(release.scope, release.key);
  if (release) values.push(release.holder);
  if (take) values.push(take.scope, take.key, take.holder, take.limit, take.until);
  if (kind === 'move') {
    const r = release!;
    const t = take!;
    const first = (cOrder(r.scope, t.scope) || cOrder(r.key, t.key)) < 0;
    values.push(...(first ? [r.scope, r.key, t.scope, t.key] : [t.scope, t.key, r.scope, r.key]));
  }
  return values;
}

/**
 * The short statement of `kind`: with `update` (the store's conditional UPDATE, `$1`-`$11`), a save
 * whose parameters follow from `$12` (see {@link fastValues}), then the NOTIFY payload with
 * `channel`; without, an acquire (`take`) from `$1`. Answers whether the counter work was done here
 * (`fast`) and, for a save, whether the row was written.
 */
export function fastFlowStatement(
  names: TableNames,
  kind: FastKind,
  update: string | null,
  channel: string | null,
): string {
  const F = names.flow;
  let next = update === null ? 1 : 12;
  const param = (type: string) => `$${next++}::${type}`;
  const NOW = param('bigint');
  const [RS, RK] = kind === 'move' || kind === 'release' ? [param('text'), param('text')] : ['', ''];
  const GONE = kind === 'take' ? '' : param('text');
  const [TS, TK, HOLDER, LIM, UNTIL] =
    kind === 'release'
      ? ['', '', '', '', '']
      : [param('text'), param('text'), param('text'), param('int'), param('bigint')];
  const [L1S, L1K, L2S, L2K] =
    kind === 'move' ? [param('text'), param('text'), param('text'), param('text')] : [];
  const is = (a: string, S: string, K: string) => `${a}.scope = ${S} AND ${a}.key = ${K}`;
  const pk = (S: string, K: string) => `f.scope = ${S} AND f.key = ${K} AND f.period = 0`;
  // The counters by primary key, locked: one, or the two of a move in key order (the last four
  // parameters, see fastValues), each found by its primary key in a nested loop.
  const read =
    kind === 'move'
      ? `c AS (SELECT f.scope, f.key, f.holds, f.waiting
        FROM (VALUES (${L1S}, ${L1K}), (${L2S}, ${L2K})) v(scope, key)
        CROSS JOIN LATERAL (SELECT f.* FROM ${F} f WHERE ${pk('v.scope', 'v.key')} FOR UPDATE) f)`
      : `c AS (SELECT f.scope, f.key, f.holds, f.waiting FROM ${F} f WHERE ${pk(RS || TS, RK || TK)} FOR UPDATE)`;
  const vars = `jsonb_build_object('n', ${NOW})`;
  const some = (holds: string, test: string) =>
    `jsonb_path_exists(${holds}, '$.* ? (@ ${test} $n)', ${vars})`;
  // The holds a counter keeps once the release is counted.
  const rest = `c.holds - ${GONE}`;
  // Not done here: a waiter; a release leaving lapsed holds only (the general statement deletes that
  // row); a take where others' holds lapsed (the general statement drops them), or refused (the
  // holder holds no live slot and the limit's worth of others do).
  const lapsedOnly = `(${rest} <> '{}' AND NOT ${some(rest, '>')})`;
  const takenFrom = (holds: string) => `(${some(`${holds} - ${HOLDER}`, '<=')}
          OR NOT (COALESCE((${holds}->>${HOLDER})::bigint > ${NOW}, false)
            OR jsonb_array_length(jsonb_path_query_array(${holds} - ${HOLDER}, '$.*')) < ${LIM}))`;
  const bad = {
    handoff: takenFrom(`(${rest})`),
    move: `CASE WHEN ${is('c', TS, TK)} THEN ${takenFrom('c.holds')} ELSE ${lapsedOnly} END`,
    release: lapsedOnly,
    take: takenFrom('c.holds'),
  }[kind];
  // Whether the taken counter has a row.
  const tHere =
    kind === 'move' ? `EXISTS (SELECT 1 FROM c WHERE ${is('c', TS, TK)})` : 'EXISTS (SELECT 1 FROM c)';
  const takes = kind === 'release' ? '' : ` AND ${UNTIL} > ${NOW} AND (${LIM} > 0 OR ${tHere})`;
  const ok = `ok AS (SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM c WHERE c.waiting <> '{}' OR ${bad})${takes})`;
  const W = update === null ? 'ok' : 'w';
  const save = update === null ? '' : `w AS (${update} AND EXISTS (SELECT 1 FROM ok) RETURNING 1),`;
  const done = `EXISTS (SELECT 1 FROM ${W})`;
  // What the release does to its counter, read where it was locked: emptied (deleted) or freed (updated).
  // An emptied counter's row goes, and the next take on it inserts it again. Kept instead, empty, for
  // that take to update in place (a heap-only update), it cost the server as much per move as the
  // delete and the insert, and the empty rows then needed a sweep that cost more than that saved.
  // One UPDATE for both counters of a move, or writes finding their rows by the ctid locked above,
  // saved nothing measurable either.
  const ofR = (what: string) =>
    `(SELECT ${what} FROM c${kind === 'move' ? ` WHERE ${is('c', RS, RK)}` : ''})`;
  const emptied = ofR(`${rest} = '{}'`);
  const freed = ofR(`c.holds ? ${GONE} AND ${rest} <> '{}'`);
  // Each write finds its row by the parameters (an index lookup whatever the planner believes of the
  // table's size) and computes the holds from the row it updates: the row as locked above.
  const taking = `f.holds${kind === 'handoff' ? ` - ${GONE}` : ''} || jsonb_build_object(${HOLDER}, ${UNTIL})`;
  const gone = `gone AS (DELETE FROM ${F} f WHERE ${pk(RS, RK)} AND ${emptied} AND ${done})`;
  const ins = `ins AS (INSERT INTO ${F} (scope, key, period, lim, holds, waiting)
        SELECT ${TS}, ${TK}, 0, ${LIM}, jsonb_build_object(${HOLDER}, ${UNTIL}), '{}'
        WHERE NOT ${tHere} AND ${done})`;
  const upd = `upd AS (UPDATE ${F} f SET holds = ${taking}, lim = ${LIM} WHERE ${pk(TS, TK)} AND ${tHere} AND ${done})`;
  const release = `freed AS (UPDATE ${F} f SET holds = f.holds - ${GONE} WHERE ${pk(RS, RK)} AND ${freed} AND ${done})`;
  const writes = {
    handoff: [upd, ins],
    move: [gone, release, upd, ins],
    release: [gone, release],
    take: [upd, ins],
  }[kind];
  const head = `WITH ${read},
      ${ok},
      ${save}
      ${writes.join(',\n      ')}`;
  if (update === null) return `${head} SELECT EXISTS (SELECT 1 FROM ok) AS fast`;
  return `${head}
    SELECT EXISTS (SELECT 1 FROM w) AS written, EXISTS (SELECT 1 FROM ok) AS fast${
      channel === null ? '' : `, (SELECT pg_notify('${channel}', $${next}) FROM w) AS notified`
    }`;
}
