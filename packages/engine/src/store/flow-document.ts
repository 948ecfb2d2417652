import type { FlowGrant, FlowKeyState, FlowNeed } from './flow.js';

// One key's flow counts as one document: what the stores that keep a key in one record (MongoDB,
// DynamoDB, the Durable Object's SQLite) read, change with these pure steps, and write back under
// a condition on the record's version. The steps never read a clock: the caller passes `now`.

/** A concurrency slot held until `until` (epoch ms). */
export interface FlowHold {
  holder: string;
  until: number;
}

/** A rate start recorded at `at` (epoch ms). */
export interface FlowStart {
  holder: string;
  at: number;
}

/** A holder waiting on the key for its instance since `since` (epoch ms). */
export interface FlowWaiter {
  holder: string;
  instance: string;
  since: number;
}

/**
 * One counter: a (scope, key) and a period (a rate's `periodMs`, 0 for concurrency slots), with its
 * slots (concurrency) or its starts of the last two periods (rate), and its waiters.
 */
export interface FlowDocument {
  scope: string;
  key: string;
  period: number;
  /** The limit of the last need that named the counter: what `list` reports. */
  limit: number;
  holds: FlowHold[];
  starts: FlowStart[];
  waiting: FlowWaiter[];
}

/** What a denial of {@link FlowGrant} carries. */
export type FlowDenial = Extract<FlowGrant, { granted: false }>;

/** The counter a need names: its scope, key and period (0 for a concurrency slot). */
export function flowCounterOf(need: FlowNeed): { scope: string; key: string; period: number } {
  return { scope: need.scope, key: need.key, period: need.periodMs ?? 0 };
}

/** An empty document for `need`'s counter. */
export function emptyFlowDocument(need: FlowNeed): FlowDocument {
  return { ...flowCounterOf(need), limit: need.limit, holds: [], starts: [], waiting: [] };
}

/**
 * When each unlapsed entry of `doc` ends at `now`, earliest first: the leases of its slots, or for
 * a rate the times its starts leave the window.
 */
function endsOf(doc: FlowDocument, now: number): Array<{ holder: string; until: number }> {
  const ends = doc.period
    ? doc.starts.map((s) => ({ holder: s.holder, until: s.at + doc.period }))
    : doc.holds.map((h) => ({ holder: h.holder, until: h.until }));
  return ends
    .filter((e) => e.until > now)
    .sort((a, b) => a.until - b.until || compareText(a.holder, b.holder));
}

/**
 * Null when `holder` may take `need` on `doc` (its counter's document) at `now`: the holder has it
 * already (an unlapsed slot, a start in the window), or there is room. Else the denial: the entries
 * counted, and when the one must end for another to fit (the earliest when exactly full).
 */
export function flowDenial(
  doc: FlowDocument | null,
  holder: string,
  need: FlowNeed,
  now: number,
): FlowDenial | null {
  const ends = doc ? endsOf(doc, now) : [];
  if (ends.length < need.limit || ends.some((e) => e.holder === holder)) return null;
  return { granted: false, need, until: ends[ends.length - need.limit]!.until, count: ends.length };
}

/**
 * `doc` after `holder` took `need` (check {@link flowDenial} first): a slot held until `until`
 * (renewed when held), or a start at `now` (none when the holder has one in the window). Its
 * waiter entry goes; lapsed holds and starts older than two periods are dropped on the way.
 */
export function flowTake(
  doc: FlowDocument | null,
  holder: string,
  need: FlowNeed,
  now: number,
  until: number,
): FlowDocument {
  const d = { ...pruneFlowDocument(doc ?? emptyFlowDocument(need), now), limit: need.limit };
  const waiting = d.waiting.filter((w) => w.holder !== holder);
  if (!d.period) {
    return { ...d, holds: [...d.holds.filter((h) => h.holder !== holder), { holder, until }], waiting };
  }
  if (d.starts.some((s) => s.holder === holder && s.at + d.period > now)) return { ...d, waiting };
  // A start that left the window is taken anew. Two periods never hold more than twice the limit.
  const starts = [...d.starts.filter((s) => s.holder !== holder), { holder, at: now }]
    .sort((a, b) => a.at - b.at)
    .slice(-2 * need.limit);
  return { ...d, starts, waiting };
}

/** `doc` with `holder` waiting for `instance` (kept once: an entry already there keeps its `since`). */
export function flowWait(
  doc: FlowDocument | null,
  holder: string,
  instance: string,
  need: FlowNeed,
  now: number,
): FlowDocument {
  const d = { ...pruneFlowDocument(doc ?? emptyFlowDocument(need), now), limit: need.limit };
  if (d.waiting.some((w) => w.holder === holder)) return d;
  return { ...d, waiting: [...d.waiting, { holder, instance, since: now }] };
}

/**
 * `doc` with what `holder` took in a call that is given back restored as `before` had it (the
 * slot, the start): an acquire that took its first needs, then was denied a later one.
 */
export function flowGiveBack(doc: FlowDocument, holder: string, before: FlowDocument | null): FlowDocument {
  const hold = before?.holds.find((h) => h.holder === holder);
  const start = before?.starts.find((s) => s.holder === holder);
  return {
    ...doc,
    holds: [...doc.holds.filter((h) => h.holder !== holder), ...(hold ? [hold] : [])],
    starts: [...doc.starts.filter((s) => s.holder !== holder), ...(start ? [start] : [])],
  };
}

/** Whether `holders` hold or wait on anything in `doc`. */
export function flowHas(doc: FlowDocument, holders: ReadonlySet<string>): boolean {
  return doc.holds.some((h) => holders.has(h.holder)) || doc.waiting.some((w) => holders.has(w.holder));
}

/**
 * `doc` after `holders` ended (slots and waiter entries; rate starts stay for two periods), and the
 * waiters to wake: the oldest, as many as slots were freed but no more than are free at `now`.
 * `doc` is null when nothing is left in it.
 */
export function flowRelease(
  doc: FlowDocument,
  holders: ReadonlySet<string>,
  now: number,
): { doc: FlowDocument | null; wake: FlowWaiter[] } {
  const freed = doc.holds.filter((h) => holders.has(h.holder)).length;
  const d = pruneFlowDocument(
    {
      ...doc,
      holds: doc.holds.filter((h) => !holders.has(h.holder)),
      waiting: doc.waiting.filter((w) => !holders.has(w.holder)),
    },
    now,
  );
  const free = d.period ? 0 : Math.min(freed, d.limit - d.holds.length);
  const wake = oldestFirst(d.waiting).slice(0, Math.max(0, free));
  return { doc: isEmptyFlowDocument(d) ? null : d, wake };
}

/** `doc` with the slots `holders` hold leased until `until`, or null when they hold none. */
export function flowRenew(
  doc: FlowDocument,
  holders: ReadonlySet<string>,
  until: number,
): FlowDocument | null {
  if (!doc.holds.some((h) => holders.has(h.holder))) return null;
  return { ...doc, holds: doc.holds.map((h) => (holders.has(h.holder) ? { holder: h.holder, until } : h)) };
}

/**
 * `doc` without lapsed holds and starts older than two periods. A rate keeps the starts of the
 * last two periods, not only those of the window at `now`: a caller whose `now` lags (it read its
 * clock before a later caller's write landed) must still count every start of its own window.
 */
export function pruneFlowDocument(doc: FlowDocument, now: number): FlowDocument {
  return {
    ...doc,
    holds: doc.holds.filter((h) => h.until > now),
    starts: doc.starts.filter((s) => s.at + 2 * doc.period > now),
  };
}

/** True when `doc` holds nothing and nobody waits on it: the store may delete it. */
export function isEmptyFlowDocument(doc: FlowDocument): boolean {
  return doc.holds.length === 0 && doc.starts.length === 0 && doc.waiting.length === 0;
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const oldestFirst = (waiting: readonly FlowWaiter[]) =>
  [...waiting].sort((a, b) => a.since - b.since || compareText(a.holder, b.holder));

/** What `list` shows of `doc` at `now`, or null when it has no unlapsed holder, start or waiter. */
export function flowKeyStateOf(doc: FlowDocument, now: number): FlowKeyState | null {
  const holders = endsOf(doc, now);
  const waiting = oldestFirst(doc.waiting).map((w) => ({
    holder: w.holder,
    instance: w.instance,
    since: w.since,
  }));
  if (holders.length === 0 && waiting.length === 0) return null;
  return {
    scope: doc.scope,
    key: doc.key,
    limit: doc.limit,
    ...(doc.period ? { periodMs: doc.period } : {}),
    holders,
    waiting,
  };
}

/**
 * The instances to wake from the waiters several keys gave, oldest first, each once: what
 * `FlowStore.release` resolves with.
 */
export function instancesToWake(waiters: readonly FlowWaiter[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const w of oldestFirst(waiters)) {
    if (seen.has(w.instance)) continue;
    seen.add(w.instance);
    out.push(w.instance);
  }
  return out;
}
