import { StoreUnavailableError } from '../errors.js';
import type { WorkflowEvent } from '../events.js';
import type { SentSignal, WakeListener, WakeNotice } from './store.js';
import type { ClaimWindow } from './store-driver.js';
import type { EncodedSnapshot } from './store-kit.js';

// What the in-memory store keeps, and the steps more than one of its verbs takes. Its verbs are
// module functions over one `MemoryRows` record, as a database's calls are over its tables.

/** A signal sent to an instance and not yet applied. */
export interface Waiting {
  seq: number;
  json: string;
  dueAt: number;
  /** The inbox's own claim (its polls), against their `now`. */
  claimedUntil?: number | undefined;
}

/** One instance: its encoded snapshot, the claim on it, its inbox. */
export interface Row {
  encoded: EncodedSnapshot;
  claim?: { until: number; token: string } | undefined;
  /** The inbox: signals sent and not yet applied, oldest first. */
  sent: Waiting[];
}

/** One counter: a scope, a key and a period (0: concurrency slots), with what it holds. */
export interface FlowCounter {
  scope: string;
  key: string;
  period: number;
  /** The limit of the last need that named it (what a listing shows). */
  limit: number;
  /** Concurrency: holder → lease end. */
  holds: Map<string, number>;
  /** Rate: the window's starts, oldest first. */
  starts: Array<{ holder: string; at: number }>;
  /** Holder → its instance and when it first waited. */
  waiting: Map<string, { instance: string; since: number }>;
}

/** Everything the in-memory store holds: its "tables", flow counters, wake listeners and availability switch. */
export interface MemoryRows {
  readonly rows: Map<string, Row>;
  readonly listeners: Set<WakeListener>;
  /** Sorted by (wakeAt, id): the "index" a due query reads instead of scanning every row. */
  readonly due: Array<{ at: number; id: string }>;
  /** The flow counters, by `[scope, key, period]` as JSON. */
  readonly flow: Map<string, FlowCounter>;
  /** The seq the next sent signal takes. */
  nextSeq: number;
  /** While false, every call fails as a database that went away. */
  available: boolean;
}

/** An empty in-memory store's record. */
export function emptyRows(): MemoryRows {
  return { rows: new Map(), listeners: new Set(), due: [], flow: new Map(), nextSeq: 1, available: true };
}

/**
 * A memory verb as a driver call: async, as a database call is, and first of all failing as an
 * unreachable server while the store is switched off.
 */
export function driverCall<A extends unknown[], R>(
  m: MemoryRows,
  verb: (m: MemoryRows, ...args: A) => R,
): (...args: A) => Promise<R> {
  return async (...args) => {
    if (!m.available) throw new StoreUnavailableError('memory store is unavailable');
    return verb(m, ...args);
  };
}

/** As a database would: after the write has returned, never inside it; each listener its own copy. */
export function announce(m: MemoryRows, notice: () => WakeNotice): void {
  for (const l of m.listeners) queueMicrotask(() => l.wake(notice()));
}

/** Announces what a written row asks to: nothing, a wake, a busy wake or a handoff with its snapshot. */
export function announceWrite(m: MemoryRows, e: EncodedSnapshot): void {
  const at = e.notice;
  if (at === null) return;
  const base = { at, workflow: e.workflow, id: e.id };
  announce(m, () =>
    e.handoff ? { ...base, snapshot: JSON.parse(e.json) } : e.busy ? { ...base, busy: true } : base,
  );
}

/** Where (at, id) stands, or would stand, in the due index. */
function position(m: MemoryRows, at: number, id: string): number {
  let lo = 0;
  let hi = m.due.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const e = m.due[mid]!;
    if (e.at < at || (e.at === at && e.id < id)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Adds an instance due at `at` (if any) to the due index. */
export function indexDue(m: MemoryRows, id: string, at: number | null): void {
  if (at !== null) m.due.splice(position(m, at, id), 0, { at, id });
}

/** Takes an instance due at `at` (if any) out of the due index. */
export function unindexDue(m: MemoryRows, id: string, at: number | null): void {
  if (at === null) return;
  const i = position(m, at, id);
  if (m.due[i]?.id === id) m.due.splice(i, 1);
}

/** A row's waiting signals, as the inbox hands them out. */
export function sentOf(row: Row): SentSignal[] {
  return row.sent.map((w) => ({ seq: w.seq, event: JSON.parse(w.json) as WorkflowEvent }));
}

/** Claims up to `limit` due ids unclaimed at `now` (of a lane, of `ids`), earliest first, for the window's owner. */
export function claimDue(m: MemoryRows, w: ClaimWindow): string[] {
  const ids = w.ids === undefined ? undefined : new Set(w.ids);
  const out: string[] = [];
  for (const e of m.due) {
    if (e.at > w.now || out.length >= w.limit) break;
    const row = m.rows.get(e.id)!;
    if (ids !== undefined && !ids.has(e.id)) continue;
    if (w.workflow !== undefined && row.encoded.workflow !== w.workflow) continue;
    if (row.claim !== undefined && row.claim.until > w.now) continue;
    out.push(e.id);
  }
  for (const id of out) m.rows.get(id)!.claim = { until: w.until, token: w.token };
  return out;
}
