import type { DueQuery, Unreadable } from './store.js';
import type { DueWindow, StoreDefinition, StoreDriver } from './store-driver.js';
import type { StoreKit } from './store-kit.js';

// The record every verb of a store made by `defineStore` works over, and the steps more than one
// verb takes. The verbs are module functions over it, so each one reads on its own.

/** What the verbs of a store made by `defineStore` share: resolved once, when the store is made. */
export interface StoreParts {
  readonly definition: StoreDefinition;
  readonly driver: StoreDriver;
  readonly kit: StoreKit;
  /** The error a failed driver call of `what` rejects with (`kit.guard`'s mapping, for a caller that handles the answer in the same `then`). */
  readonly unavailable: (what: string, error: unknown) => unknown;
  /** The default lease of a claim, checked (see `claimMsOption`). */
  readonly claimMs: number;
  /** The token of claims taken without one of the caller's own: they are this store object's. */
  readonly ownToken: string;
}

/** The due prologue of `listDue` and `claimDue`: the driver's window, or null when nothing can match. */
export function dueWindow(
  parts: StoreParts,
  now: number,
  limit: number,
  query: DueQuery | undefined,
): DueWindow | null {
  const { kit } = parts;
  const n = kit.dueLimit(now, limit);
  const workflow = kit.dueWorkflow(query);
  // Checked before the early return: a bad lease or token is refused whatever else the call asks.
  const lease = kit.dueLease(query, parts.claimMs);
  const token = query?.token ?? parts.ownToken;
  if (typeof token !== 'string' || token === '')
    throw new TypeError('listDue: token must be a non-empty string');
  if (n === null || workflow === null) return null;
  return { now, until: now + lease, limit: n, token, ...(workflow === undefined ? {} : { workflow }) };
}

/**
 * Decodes claimed rows; with `onUnreadable`, a row that cannot be read is reported and left out
 * (still claimed) rather than failing the rest.
 */
export function decodeEach<R, T>(rows: R[], read: (row: R) => T | null, onUnreadable?: Unreadable): T[] {
  if (!onUnreadable) return rows.flatMap((r) => read(r) ?? []);
  const out: T[] = [];
  for (const r of rows) {
    let got: T | null;
    try {
      got = read(r);
    } catch (e) {
      onUnreadable(e);
      continue;
    }
    if (got !== null) out.push(got);
  }
  return out;
}

/** Sent signals' seqs, checked: each a safe integer, or a RangeError. */
export const seqsOf = (seqs: readonly number[]): number[] =>
  Array.from(seqs, (n) => {
    if (!Number.isSafeInteger(n)) throw new RangeError(`sent signal seq must be an integer, got ${n}`);
    return n;
  });
