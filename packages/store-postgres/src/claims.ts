import type { ClaimsDriver, DueWindow, StoreDriver } from '@stepfold/engine';
import { toInt8 } from './encode.js';
import type { Query } from './query.js';
import { CAPPED_LIMIT, type storeStatements } from './statements.js';

/**
 * A window's `$1`-`$4`: `now` and the claim's expiry as int8 (stored wake times are whole ms
 * rounded up, so `wake_at <= floor(now)` is `wakeAt <= now`), the limit, and the claim's token.
 */
const windowValues = (w: DueWindow): unknown[] => [
  toInt8(Math.floor(w.now)),
  toInt8(Math.floor(w.until)),
  w.limit,
  w.token,
];

/** `due` (listDue) and the claims driver: one claiming statement each, the token written with the claim. */
export function pgClaims(
  query: Query,
  sql: ReturnType<typeof storeStatements>,
): Pick<StoreDriver, 'due'> & { claims: ClaimsDriver } {
  return {
    async due(w) {
      const values = windowValues(w);
      if (w.workflow !== undefined) values.push(w.workflow);
      const forms = w.limit <= CAPPED_LIMIT ? sql.LIST_DUE.capped : sql.LIST_DUE.open;
      const text = w.workflow === undefined ? forms.all : forms.lane;
      // In the due order: the statement sorts what it claimed by each row's place in it.
      const r = await query<{ id: string }>(text, values);
      return r.rows.map((x) => x.id);
    },
    claims: {
      async claim(w) {
        const values = windowValues(w);
        if (w.workflow !== undefined) values.push(w.workflow);
        if (w.ids !== undefined) values.push(w.ids);
        const { ids, laneIds } = sql.CLAIM_DUE;
        const { all, lane } = w.limit <= CAPPED_LIMIT ? sql.CLAIM_DUE.capped : sql.CLAIM_DUE.open;
        const text = w.workflow === undefined ? (w.ids ? ids : all) : w.ids ? laneIds : lane;
        const r = await query<{ id: string; json: string }>(text, values);
        return r.rows.map((x) => x.json);
      },
      async release(ids, token) {
        await query(sql.RELEASE, [ids, token]);
      },
    },
  };
}
