import { compareFlowCounters } from './document-flow.js';
import type { FlowGrant, FlowKeyState, FlowNeed, SaveFlow } from './flow.js';
import { driverCall, type FlowCounter, type MemoryRows } from './memory-rows.js';
import type { FlowCounterRef, FlowDriver, FlowListArgs } from './store-driver.js';

// The in-memory store's flow calls: the reference semantics every database's flow driver matches.
// Each call runs in one turn of the event loop, so it is atomic over every counter it touches.

/** The in-memory store's flow calls over its counters. */
export function memoryFlow(m: MemoryRows): FlowDriver {
  return {
    inUpdate: true,
    inInsert: true,
    acquire: driverCall(m, acquire),
    release: driverCall(m, release),
    renew: driverCall(m, renew),
    list: driverCall(m, list),
  };
}

const idOf = (scope: string, key: string, period: number) => JSON.stringify([scope, key, period]);

function counterFor(m: MemoryRows, need: FlowNeed): FlowCounter {
  const period = need.periodMs ?? 0;
  const id = idOf(need.scope, need.key, period);
  let c = m.flow.get(id);
  if (!c) {
    c = {
      scope: need.scope,
      key: need.key,
      period,
      limit: need.limit,
      holds: new Map(),
      starts: [],
      waiting: new Map(),
    };
    m.flow.set(id, c);
  }
  return c;
}

/**
 * Drops lapsed holds and starts older than two periods at `now`. A rate keeps the starts of the
 * last two periods, not only those of the window at `now`: a caller whose `now` lags (it read its
 * clock before a later caller's call) must still count every start of its own window.
 */
function prune(c: FlowCounter, now: number): void {
  for (const [h, until] of c.holds) if (until <= now) c.holds.delete(h);
  if (c.period) c.starts = c.starts.filter((s) => s.at + 2 * c.period > now);
}

/** The starts of a rate's window at `now` (those after `now` too: a later caller's). */
const inWindow = (c: FlowCounter, now: number) => c.starts.filter((s) => s.at + c.period > now);

/**
 * Whether `need` is met for `holder` at `now` (its counter pruned), or the denial that says why not:
 * until the entry that must lapse for one more to fit has (the earliest when exactly full).
 */
function check(c: FlowCounter, holder: string, need: FlowNeed, now: number): FlowGrant {
  const window = inWindow(c, now);
  const mine = c.period ? window.some((s) => s.holder === holder) : c.holds.has(holder);
  if (mine) return { granted: true };
  const ends = c.period ? window.map((s) => s.at + c.period) : [...c.holds.values()];
  if (ends.length < need.limit) return { granted: true };
  ends.sort((a, b) => a - b);
  return { granted: false, need, until: ends[ends.length - need.limit]!, count: ends.length };
}

function acquire(
  m: MemoryRows,
  holder: string,
  instance: string,
  needs: readonly FlowNeed[],
  now: number,
  until: number,
): FlowGrant {
  const counters = countersOf(m, needs, now);
  const refused = firstUnmet(m, counters, holder, needs, now);
  if (refused) {
    const [c, verdict] = refused;
    if (!c.waiting.has(holder)) c.waiting.set(holder, { instance, since: now });
    return verdict;
  }
  grant(counters, holder, needs, now, until);
  return { granted: true };
}

/**
 * A save's flow work ({@link SaveFlow}): its release, then its take, as {@link release} and
 * {@link acquire} do them; the instances the release woke, or undefined when the take's needs are
 * not met (then nothing is written, no waiter entry either: the runner asks `acquire` then).
 * Called before the save writes its row, in the same turn: atomic with it.
 */
export function saveFlow(m: MemoryRows, f: Omit<SaveFlow, 'woken'>): string[] | undefined {
  const t = f.take;
  if (t) {
    // Decided after the release, as the release comes first: a counter it frees may be the take's.
    const counters = countersOf(m, t.needs, f.now);
    const freed = (c: FlowCounter) => (c.period ? 0 : (f.release ?? []).filter((h) => c.holds.has(h)).length);
    const room = counters.every((c, i) => {
      const need = t.needs[i]!;
      if (check(c, t.holder, need, f.now).granted) return true;
      return freed(c) > 0 && c.holds.size - freed(c) < need.limit;
    });
    if (!room) {
      for (const c of counters) forgetIfEmpty(m, c);
      return undefined;
    }
  }
  const woken = f.release?.length ? release(m, f.release, f.now, f.counters) : [];
  if (t) grant(countersOf(m, t.needs, f.now), t.holder, t.needs, f.now, t.until);
  return woken;
}

/** The counters of `needs`, pruned at `now` (made when missing). */
function countersOf(m: MemoryRows, needs: readonly FlowNeed[], now: number): FlowCounter[] {
  return needs.map((need) => {
    const c = counterFor(m, need);
    prune(c, now);
    return c;
  });
}

/**
 * The first need of `holder` not met, with its counter and denial (its limit recorded), after
 * dropping the counters left empty; undefined when every need is met.
 */
function firstUnmet(
  m: MemoryRows,
  counters: readonly FlowCounter[],
  holder: string,
  needs: readonly FlowNeed[],
  now: number,
): [FlowCounter, FlowGrant] | undefined {
  for (const [i, c] of counters.entries()) {
    const verdict = check(c, holder, needs[i]!, now);
    if (verdict.granted) continue;
    c.limit = needs[i]!.limit;
    // Counters this call made or emptied and left empty are not kept.
    for (const other of counters) if (other !== c) forgetIfEmpty(m, other);
    return [c, verdict];
  }
  return undefined;
}

/** Every need taken for `holder`: holds set to `until`, a missing start recorded at `now`, its waiter entries gone. */
function grant(
  counters: readonly FlowCounter[],
  holder: string,
  needs: readonly FlowNeed[],
  now: number,
  until: number,
): void {
  for (const [i, c] of counters.entries()) {
    c.limit = needs[i]!.limit;
    if (!c.period) c.holds.set(holder, until);
    else if (!inWindow(c, now).some((s) => s.holder === holder)) {
      // A start that left the window is taken anew. Two periods never hold more than twice the limit.
      c.starts = c.starts.filter((s) => s.holder !== holder);
      c.starts.push({ holder, at: now });
      c.starts.sort((a, b) => a.at - b.at);
      if (c.starts.length > 2 * c.limit) c.starts = c.starts.slice(-2 * c.limit);
    }
    c.waiting.delete(holder);
  }
}

function forgetIfEmpty(m: MemoryRows, c: FlowCounter, id = idOf(c.scope, c.key, c.period)): void {
  if (!c.holds.size && !c.starts.length && !c.waiting.size) m.flow.delete(id);
}

/**
 * The counters to look for holders on: those `at` names when given (a holder on any other stays,
 * as on a database that looks only there), else all, by id.
 */
function where(m: MemoryRows, at: readonly FlowCounterRef[] | undefined): Array<[string, FlowCounter]> {
  if (!at) return [...m.flow];
  const out: Array<[string, FlowCounter]> = [];
  for (const ref of at) {
    const id = idOf(ref.scope, ref.key, ref.period);
    const c = m.flow.get(id);
    if (c) out.push([id, c]);
  }
  return out;
}

function release(
  m: MemoryRows,
  holders: readonly string[],
  now: number,
  at?: readonly FlowCounterRef[],
): string[] {
  const woken: Array<{ instance: string; since: number; holder: string }> = [];
  for (const [id, c] of where(m, at)) {
    let freed = 0;
    for (const h of holders) {
      if (c.holds.delete(h)) freed++;
      c.waiting.delete(h);
    }
    prune(c, now);
    if (freed && !c.period) {
      const free = c.limit - c.holds.size;
      const oldest = [...c.waiting]
        .map(([holder, w]) => ({ holder, ...w }))
        .sort((a, b) => a.since - b.since || (a.holder < b.holder ? -1 : 1));
      woken.push(...oldest.slice(0, Math.max(0, Math.min(freed, free))));
    }
    forgetIfEmpty(m, c, id);
  }
  woken.sort((a, b) => a.since - b.since || (a.holder < b.holder ? -1 : 1));
  return [...new Set(woken.map((w) => w.instance))];
}

function renew(
  m: MemoryRows,
  holders: readonly string[],
  until: number,
  at?: readonly FlowCounterRef[],
): void {
  for (const [, c] of where(m, at)) for (const h of holders) if (c.holds.has(h)) c.holds.set(h, until);
}

function list(m: MemoryRows, args: FlowListArgs): FlowKeyState[] {
  const { after, now } = args;
  const order = compareFlowCounters;
  const out: FlowKeyState[] = [];
  for (const c of [...m.flow.values()].sort(order)) {
    if (args.scope !== undefined && c.scope !== args.scope) continue;
    if (after && order(c, after) <= 0) continue;
    const holders = c.period
      ? inWindow(c, now).map((s) => ({ holder: s.holder, until: s.at + c.period }))
      : [...c.holds].filter(([, until]) => until > now).map(([holder, until]) => ({ holder, until }));
    const waiting = [...c.waiting]
      .map(([holder, w]) => ({ holder, instance: w.instance, since: w.since }))
      .sort((a, b) => a.since - b.since || (a.holder < b.holder ? -1 : 1));
    if (!holders.length && !waiting.length) continue;
    out.push({
      scope: c.scope,
      key: c.key,
      limit: c.limit,
      ...(c.period ? { periodMs: c.period } : {}),
      holders,
      waiting,
    });
    if (out.length > args.limit) break;
  }
  return out;
}
