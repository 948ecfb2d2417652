import { searchRows } from './list-query.js';
import { memoryFlow, saveFlow } from './memory-flow.js';
import { memoryInbox } from './memory-inbox.js';
import { announceWrite, claimDue, driverCall, indexDue, type MemoryRows, unindexDue } from './memory-rows.js';
import { reindexSearch, searchCandidates } from './memory-search.js';
import { memoryStream } from './memory-stream.js';
import type { WakeListener, WakeSubscription } from './store.js';
import type { ClaimWindow, DriverOutcome, InsertFlow, StoreDriver, UpdateCondition } from './store-driver.js';
import type { EncodedSnapshot, ListArgs } from './store-kit.js';

/** The in-memory store's database calls: each verb a module function over its rows. */
export function memoryDriver(m: MemoryRows): StoreDriver {
  return {
    setup: driverCall(m, () => undefined),
    insert: driverCall(m, insert),
    select: driverCall(m, select),
    update: driverCall(m, update),
    version: driverCall(m, version),
    due: driverCall(m, claimDue),
    page: driverCall(m, page),
    searches: true,
    remove: driverCall(m, remove),
    claims: {
      claim: driverCall(m, claimRows),
      release: driverCall(m, release),
    },
    inbox: memoryInbox(m),
    wakes: { subscribe: driverCall(m, subscribe) },
    flow: memoryFlow(m),
    stream: memoryStream(m),
  };
}

/** `e` as a row keeps it: its attributes copied, so a caller changing its snapshot's leaves the index right. */
const kept = (e: EncodedSnapshot): EncodedSnapshot => (e.search ? { ...e, search: { ...e.search } } : e);

function insert(m: MemoryRows, written: EncodedSnapshot, flow?: InsertFlow): boolean | 'refused' {
  if (m.rows.has(written.id)) return false;
  // The take is done in the same write: refused, nothing is written.
  if (flow && !saveFlow(m, flow)) return 'refused';
  const e = kept(written);
  m.rows.set(e.id, { encoded: e, sent: [] });
  indexDue(m, e.id, e.wakeAt);
  reindexSearch(m.search, e.id, null, e.search);
  announceWrite(m, e);
  return true;
}

function select(m: MemoryRows, id: string): string | null {
  return m.rows.get(id)?.encoded.json ?? null;
}

function update(m: MemoryRows, written: EncodedSnapshot, c: UpdateCondition): DriverOutcome {
  const e = kept(written);
  const row = m.rows.get(e.id);
  if (!row) return 'missing';
  if (row.encoded.version !== c.expected) return { stored: row.encoded.version };
  if (c.match) {
    const stored = row.sent.filter((w) => c.consumed?.includes(w.seq)).map((w) => w.json);
    const { json, sent } = c.match;
    if (row.encoded.json !== json || stored.length !== sent.length || stored.some((e, i) => e !== sent[i]))
      return 'failed';
  }
  // The flow work is done in the same write: a take refused writes nothing.
  const woken = c.flow ? saveFlow(m, c.flow) : [];
  if (!woken) return 'refused';
  unindexDue(m, e.id, row.encoded.wakeAt);
  reindexSearch(m.search, e.id, row.encoded.search, e.search);
  row.encoded = e;
  row.claim = undefined;
  if (c.consumed) {
    const gone = new Set(c.consumed);
    row.sent = row.sent.filter((w) => !gone.has(w.seq));
  }
  indexDue(m, e.id, e.wakeAt);
  announceWrite(m, e);
  return c.flow ? { woken } : 'written';
}

function version(m: MemoryRows, id: string): number | null {
  return m.rows.get(id)?.encoded.version ?? null;
}

function page(m: MemoryRows, args: ListArgs): Array<{ id: string; json: string }> {
  if (args.search) {
    // The rows an equality or `in` selects (memory-search.ts), else every row.
    const ids = searchCandidates(m.search, args.search);
    const rows = ids ? ids.map((id) => m.rows.get(id)!.encoded) : [...m.rows.values()].map((r) => r.encoded);
    return searchRows(rows, args.search, args.cursor, args.limit).map((e) => ({ id: e.id, json: e.json }));
  }
  const out: Array<{ id: string; json: string }> = [];
  for (const id of [...m.rows.keys()].sort()) {
    if (args.cursor !== null && id <= args.cursor) continue;
    const { encoded } = m.rows.get(id)!;
    if (args.status !== undefined && encoded.status !== args.status) continue;
    if (args.workflow !== undefined && encoded.workflow !== args.workflow) continue;
    out.push({ id, json: encoded.json });
    if (out.length > args.limit) break;
  }
  return out;
}

function remove(m: MemoryRows, id: string, version?: number): boolean {
  const row = m.rows.get(id);
  if (!row || (version !== undefined && row.encoded.version !== version)) return false;
  unindexDue(m, id, row.encoded.wakeAt);
  reindexSearch(m.search, id, row.encoded.search, null);
  m.rows.delete(id);
  return true;
}

function claimRows(m: MemoryRows, w: ClaimWindow): string[] {
  return claimDue(m, w).map((id) => m.rows.get(id)!.encoded.json);
}

function release(m: MemoryRows, ids: readonly string[], token: string): void {
  for (const id of ids) {
    const row = m.rows.get(id);
    if (row?.claim?.token === token) row.claim = undefined;
  }
}

function subscribe(m: MemoryRows, listener: WakeListener): WakeSubscription {
  m.listeners.add(listener);
  return {
    async close() {
      m.listeners.delete(listener);
    },
  };
}
