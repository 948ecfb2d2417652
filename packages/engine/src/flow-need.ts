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

/**
 * A flow counter: its scope, its key and its `period` (a rate need's `periodMs`, 0 for a
 * concurrency slot), so a step's concurrency limit and rate limits, which share a scope and key,
 * never count against each other. What a release names (where its holders are) and where a
 * listing resumes.
 */
export interface FlowCounterRef {
  scope: string;
  key: string;
  /** A rate counter's `periodMs`; 0 for a concurrency counter. */
  period: number;
}
