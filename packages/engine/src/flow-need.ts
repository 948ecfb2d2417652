// What a holder needs of the store's flow counts, as the reducer resolves it from a definition's
// limits: shared by the snapshot (which records it) and the store contract (which counts it).

/**
 * One limit a holder needs, resolved by the reducer: a concurrency slot (no `periodMs`) or a start
 * in a rate window (`periodMs`). `scope` names the counter (by default the workflow and step, or
 * the workflow for instance limits), `key` the value of the limit's key path (`''` without one).
 */
export interface FlowNeed {
  scope: string;
  key: string;
  /** At most this many holders (concurrency) or starts per `periodMs` (rate); a positive integer. */
  limit: number;
  /** Rate limits: the window, in ms (a positive integer). Absent: a concurrency slot. */
  periodMs?: number | undefined;
}
