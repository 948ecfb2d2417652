import { StoreUnavailableError } from '../errors.js';
import type { WorkflowEvent } from '../events.js';
import type { SearchIndex } from './memory-search.js';
import type { SentSignal, WakeListener, WakeNotice } from './store.js';
import type { ClaimWindow, StoredStreamEntry } from './store-driver.js';
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
  /** Rate: its starts of the last two periods (see memory-flow.ts), oldest first. */
  starts: Array<{ holder: string; at: number }>;
  /** Holder → its instance and when it first waited. */
  waiting: Map<string, { instance: string; since: number }>;
}

/** One instance's stream: its entries (offset = index), fences per step, and the tails waiting for more. */
export interface MemoryStream {
  entries: StoredStreamEntry[];
  fences: Map<string, number>;
  /** Called (and dropped) at the next append. */
  waiting: Set<() => void>;
}

/** Everything the in-memory store holds: its "tables", flow counters, wake listeners and availability switch. */
export interface MemoryRows {
  readonly rows: Map<string, Row>;
  readonly listeners: Set<WakeListener>;
  /** Sorted by (wakeAt, id): the "index" a due query reads instead of scanning every row; `key` its fairness group. */
  readonly due: Array<{ at: number; id: string; key: string }>;
  /** How many entries of `due` have a fairness key: none, and a due query is the plain earliest-first walk. */
  fairDue: number;
  /** Fairness key → the `now` of the last due query that handed out one of its instances. */
  readonly served: Map<string, number>;
  /** The flow counters, by `[scope, key, period]` as JSON. */
  readonly flow: Map<string, FlowCounter>;
  /** The streams, by instance id. */
  readonly streams: Map<string, MemoryStream>;
  /** The search attributes' index (memory-search.ts): what an equality or `in` reads. */
  readonly search: SearchIndex;
  /** The seq the next sent signal takes. */
  nextSeq: number;
  /** While false, every call fails as a database that went away. */
  available: boolean;
}

/** An empty in-memory store's record. */
export function emptyRows(): MemoryRows {
  return {
    rows: new Map(),
    listeners: new Set(),
    due: [],
    fairDue: 0,
    served: new Map(),
    flow: new Map(),
    streams: new Map(),
    search: new Map(),
    nextSeq: 1,
    available: true,
  };
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

/** Adds an instance due at `at` (if any) to the due index, in the fairness group its stored row names. */
export function indexDue(m: MemoryRows, id: string, at: number | null): void {
  if (at === null) return;
  const key = m.rows.get(id)?.encoded.fairKey ?? '';
  m.due.splice(position(m, at, id), 0, { at, id, key });
  if (key !== '') m.fairDue++;
}

/** Takes an instance due at `at` (if any) out of the due index. */
export function unindexDue(m: MemoryRows, id: string, at: number | null): void {
  if (at === null) return;
  const i = position(m, at, id);
  const e = m.due[i];
  if (e?.id !== id) return;
  m.due.splice(i, 1);
  if (e.key !== '') m.fairDue--;
}

/** A row's waiting signals, as the inbox hands them out. */
export function sentOf(row: Row): SentSignal[] {
  return row.sent.map((w) => ({ seq: w.seq, event: JSON.parse(w.json) as WorkflowEvent }));
}

/** Claims up to `limit` due ids unclaimed at `now` (of a lane, of `ids`) in the due order, for the window's owner. */
export function claimDue(m: MemoryRows, w: ClaimWindow): string[] {
  const ids = w.ids === undefined ? undefined : new Set(w.ids);
  const fits = (id: string): boolean => {
    const row = m.rows.get(id)!;
    if (ids !== undefined && !ids.has(id)) return false;
    if (w.workflow !== undefined && row.encoded.workflow !== w.workflow) return false;
    return row.claim === undefined || row.claim.until <= w.now;
  };
  const out = m.fairDue === 0 ? earliest(m, w, fits) : roundRobin(m, w, fits);
  for (const id of out) m.rows.get(id)!.claim = { until: w.until, token: w.token };
  return out;
}

/** The due order with one group: the first `limit` due entries that fit, earliest first. */
function earliest(m: MemoryRows, w: ClaimWindow, fits: (id: string) => boolean): string[] {
  const out: string[] = [];
  for (const e of m.due) {
    if (e.at > w.now || out.length >= w.limit) break;
    if (fits(e.id)) out.push(e.id);
  }
  return out;
}

/**
 * The due order across fairness groups (see `Store.listDue`): each group's due entries that fit,
 * earliest first (no group needs more than `limit`), then the first of every group, the second of
 * every group, and so on, groups by their turn (the later of their head's time and when they were
 * last served), then key; the groups handed out are served at `now`. The reference the database
 * stores reach through their indexes; here a walk over the due entries.
 */
function roundRobin(m: MemoryRows, w: ClaimWindow, fits: (id: string) => boolean): string[] {
  const groups = new Map<string, { turn: number; key: string; ids: string[] }>();
  for (const e of m.due) {
    if (e.at > w.now) break;
    const g = groups.get(e.key);
    if (g !== undefined && g.ids.length >= w.limit) continue;
    if (!fits(e.id)) continue;
    const turn = Math.max(e.at, m.served.get(e.key) ?? e.at);
    if (g === undefined) groups.set(e.key, { turn, key: e.key, ids: [e.id] });
    else g.ids.push(e.id);
  }
  const order = [...groups.values()].sort((a, b) =>
    a.turn !== b.turn ? a.turn - b.turn : a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
  );
  const out: string[] = [];
  for (let round = 0; out.length < w.limit; round++) {
    let any = false;
    for (const g of order) {
      if (round >= g.ids.length) continue;
      any = true;
      out.push(g.ids[round]!);
      if (out.length >= w.limit) break;
    }
    if (!any) break;
  }
  // Only where groups compete: one group alone keeps no record (a store without keys none at all).
  if (order.length > 1)
    for (const id of out) {
      const key = m.rows.get(id)!.encoded.fairKey ?? '';
      m.served.set(key, Math.max(m.served.get(key) ?? w.now, w.now));
    }
  return out;
}
