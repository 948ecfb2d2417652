import { StoreUnavailableError } from '../errors.js';
import type { WorkflowEvent } from '../events.js';
import { isTerminal } from '../snapshot.js';
import { type DefinedStore, defineStore } from './define-store.js';
import type { SentSignal, WakeListener, WakeNotice } from './store.js';
import type { ClaimWindow, DueWindow, StoreDriver } from './store-driver.js';
import type { EncodedSnapshot } from './store-kit.js';

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /** Size limit in bytes of a serialized snapshot (default 1 MiB). */
  maxSnapshotBytes?: number | undefined;
  /** How long ids returned by `listDue` stay claimed, against its `now` (default 30 000 ms). */
  claimMs?: number | undefined;
}

/** The in-memory store, plus a switch that makes it behave like an unreachable server (for tests). */
export interface MemoryStore extends DefinedStore {
  /** While false, every call fails with `StoreUnavailableError`, as a database that went away. */
  setAvailable(available: boolean): void;
}

interface Waiting {
  seq: number;
  json: string;
  dueAt: number;
  /** The inbox's own claim (its polls), against their `now`. */
  claimedUntil?: number | undefined;
}

interface Row {
  encoded: EncodedSnapshot;
  claim?: { until: number; token: string } | undefined;
  /** The inbox: signals sent and not yet applied, oldest first. */
  sent: Waiting[];
}

/**
 * An embedded store with the exact conditional-write semantics of the database adapters, and every
 * capability (claims with tokens, the inbox, wakes): the TypeScript reference of the store protocol.
 * Rows are kept as JSON strings, so callers never share objects with the store.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const rows = new Map<string, Row>();
  const listeners = new Set<WakeListener>();
  // Sorted by (wakeAt, id): the "index" listDue reads instead of scanning every row.
  const due: Array<{ at: number; id: string }> = [];
  let nextSeq = 1;
  let available = true;

  const check = () => {
    if (!available) throw new StoreUnavailableError('memory store is unavailable');
  };
  /** As a database would: after the write has returned, never inside it; each listener its own copy. */
  const announce = (hint: () => WakeNotice) => {
    for (const l of listeners) queueMicrotask(() => l.wake(hint()));
  };
  const noticeOf = (e: EncodedSnapshot) => {
    const at = e.notice;
    if (at === null) return;
    const base = { at, workflow: e.workflow, id: e.id };
    announce(() =>
      e.handoff ? { ...base, snapshot: JSON.parse(e.json) } : e.busy ? { ...base, busy: true } : base,
    );
  };
  const position = (at: number, id: string) => {
    let lo = 0;
    let hi = due.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const e = due[mid]!;
      if (e.at < at || (e.at === at && e.id < id)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const unindex = (id: string, at: number | null) => {
    if (at === null) return;
    const i = position(at, id);
    if (due[i]?.id === id) due.splice(i, 1);
  };
  const index = (id: string, at: number | null) => {
    if (at !== null) due.splice(position(at, id), 0, { at, id });
  };
  const sentOf = (row: Row): SentSignal[] =>
    row.sent.map((w) => ({ seq: w.seq, event: JSON.parse(w.json) as WorkflowEvent }));

  /** Claims up to `limit` due ids unclaimed at `now` (of a lane, of `ids`), earliest first, for the window's owner. */
  const claim = (w: ClaimWindow): string[] => {
    const ids = w.ids === undefined ? undefined : new Set(w.ids);
    const out: string[] = [];
    for (const e of due) {
      if (e.at > w.now || out.length >= w.limit) break;
      const row = rows.get(e.id)!;
      if (ids !== undefined && !ids.has(e.id)) continue;
      if (w.workflow !== undefined && row.encoded.workflow !== w.workflow) continue;
      if (row.claim !== undefined && row.claim.until > w.now) continue;
      out.push(e.id);
    }
    for (const id of out) rows.get(id)!.claim = { until: w.until, token: w.token };
    return out;
  };

  const driver: StoreDriver = {
    async setup() {
      check();
    },
    async insert(e) {
      check();
      if (rows.has(e.id)) return false;
      rows.set(e.id, { encoded: e, sent: [] });
      index(e.id, e.wakeAt);
      noticeOf(e);
      return true;
    },
    async select(id) {
      check();
      return rows.get(id)?.encoded.json ?? null;
    },
    async update(e, c) {
      check();
      const row = rows.get(e.id);
      if (!row) return 'missing';
      if (row.encoded.version !== c.expected) return { stored: row.encoded.version };
      if (c.match) {
        const stored = row.sent.filter((w) => c.consumed?.includes(w.seq)).map((w) => w.json);
        const { json, sent } = c.match;
        if (
          row.encoded.json !== json ||
          stored.length !== sent.length ||
          stored.some((e, i) => e !== sent[i])
        )
          return 'failed';
      }
      unindex(e.id, row.encoded.wakeAt);
      row.encoded = e;
      row.claim = undefined;
      if (c.consumed) {
        const gone = new Set(c.consumed);
        row.sent = row.sent.filter((w) => !gone.has(w.seq));
      }
      index(e.id, e.wakeAt);
      noticeOf(e);
      return 'written';
    },
    async version(id) {
      check();
      return rows.get(id)?.encoded.version ?? null;
    },
    async due(w: DueWindow) {
      check();
      return claim(w);
    },
    async page(args) {
      check();
      const out: Array<{ id: string; json: string }> = [];
      for (const id of [...rows.keys()].sort()) {
        if (args.cursor !== null && id <= args.cursor) continue;
        const { encoded } = rows.get(id)!;
        if (args.status !== undefined && encoded.status !== args.status) continue;
        if (args.workflow !== undefined && encoded.workflow !== args.workflow) continue;
        out.push({ id, json: encoded.json });
        if (out.length > args.limit) break;
      }
      return out;
    },
    async remove(id, version) {
      check();
      const row = rows.get(id);
      if (!row || (version !== undefined && row.encoded.version !== version)) return false;
      unindex(id, row.encoded.wakeAt);
      rows.delete(id);
      return true;
    },
    claims: {
      async claim(w) {
        check();
        return claim(w).map((id) => rows.get(id)!.encoded.json);
      },
      async release(ids, token) {
        check();
        for (const id of ids) {
          const row = rows.get(id);
          if (row?.claim?.token === token) row.claim = undefined;
        }
      },
    },
    inbox: {
      async append(id, entry, accept) {
        check();
        const row = rows.get(id);
        if (!row || isTerminal(row.encoded.status) || !accept.includes(row.encoded.definition)) return false;
        row.sent.push({ seq: nextSeq++, json: entry.json, dueAt: entry.dueAt });
        const { encoded } = row;
        const sent = sentOf(row);
        announce(() => ({
          at: entry.at,
          workflow: encoded.workflow,
          id,
          snapshot: JSON.parse(encoded.json),
          sent: structuredClone(sent),
        }));
        return true;
      },
      async claim(w) {
        check();
        // Signals past their grace and unclaimed, oldest first (a scan: a reference need not be fast);
        // each claimed, and its instance returned with every signal waiting for it.
        const ready = [...rows.values()]
          .flatMap((r) => r.sent.map((s) => ({ r, s })))
          .filter(({ s }) => s.dueAt <= w.now && (s.claimedUntil === undefined || s.claimedUntil <= w.now))
          .sort((a, b) => a.s.dueAt - b.s.dueAt || a.s.seq - b.s.seq)
          .slice(0, w.limit);
        const claimed = new Set<Row>();
        for (const { r, s } of ready) {
          s.claimedUntil = w.until;
          claimed.add(r);
        }
        return [...claimed].map((r) => ({ json: r.encoded.json, sent: sentOf(r) }));
      },
      async claimIds(ids) {
        check();
        return ids.flatMap((id) => {
          const r = rows.get(id);
          return r?.sent.length ? [{ json: r.encoded.json, sent: sentOf(r) }] : [];
        });
      },
      async drop(id, seqs, version) {
        check();
        const row = rows.get(id);
        if (!row || row.encoded.version !== version) return;
        const gone = new Set(seqs);
        row.sent = row.sent.filter((w) => !gone.has(w.seq));
      },
    },
    wakes: {
      async subscribe(listener) {
        check();
        listeners.add(listener);
        return {
          async close() {
            listeners.delete(listener);
          },
        };
      },
    },
  };

  // The switch throws StoreUnavailableError itself: no driver error means "unavailable".
  const store = defineStore(
    {
      name: 'memory',
      isUnavailable: () => false,
      sizes: { asked: options.maxSnapshotBytes, fallback: 1024 * 1024, most: Number.MAX_SAFE_INTEGER },
      claimMs: options.claimMs,
    },
    driver,
  );
  return Object.assign(store, {
    setAvailable(value: boolean) {
      available = value;
    },
  });
}
