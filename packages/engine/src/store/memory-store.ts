import { StoreUnavailableError } from '../errors.js';
import type { Snapshot } from '../snapshot.js';
import type { DueQuery, ListPage, ListQuery, Store, WakeListener } from './store.js';
import { createStoreKit } from './store-kit.js';

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /** Size limit in bytes of a serialized snapshot (default 1 MiB). */
  maxSnapshotBytes?: number | undefined;
  /** How long ids returned by `listDue` stay claimed, against its `now` (default 30 000 ms). */
  claimMs?: number | undefined;
}

/** The in-memory store, plus a switch that makes it behave like an unreachable server (for tests). */
export interface MemoryStore extends Store {
  /** While false, every call fails with `StoreUnavailableError`, as a database that went away. */
  setAvailable(available: boolean): void;
}

interface Row {
  json: string;
  version: number;
  wakeAt: number | null;
  status: Snapshot['status'];
  workflow: string;
}

/**
 * An embedded store with the exact conditional-write semantics of the database adapters.
 * Rows are kept as JSON strings, so callers never share objects with the store.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  // The switch below throws StoreUnavailableError itself: no driver error means "unavailable".
  const kit = createStoreKit('memory', () => false, {
    asked: options.maxSnapshotBytes,
    fallback: 1024 * 1024,
    most: Number.MAX_SAFE_INTEGER,
  });
  const claimMs = options.claimMs ?? 30_000;
  const rows = new Map<string, Row>();
  // id → claim expiry (against listDue's `now`); a save or releaseDue ends it.
  const claims = new Map<string, number>();
  const listeners = new Set<WakeListener>();
  // A hand-off's notice carries its snapshot (each listener its own copy, as a database sends it).
  const announce = (at: number | null, workflow: string, id: string, handoff?: string, busy?: boolean) => {
    if (at === null) return;
    // As a database would: after the write has returned, never inside it.
    for (const l of listeners)
      queueMicrotask(() =>
        l.wake(
          handoff !== undefined
            ? { at, workflow, id, snapshot: kit.decode(handoff) }
            : busy
              ? { at, workflow, id, busy }
              : { at, workflow, id },
        ),
      );
  };
  // Sorted by (wakeAt, id): the "index" listDue reads instead of scanning every row.
  const due: Array<{ at: number; id: string }> = [];
  let available = true;

  const check = () => {
    if (!available) throw new StoreUnavailableError('memory store is unavailable');
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
  const encode = (snapshot: Snapshot) => {
    const e = kit.encode(snapshot);
    const row: Row = {
      json: e.json,
      version: e.version,
      wakeAt: e.wakeAt,
      status: e.status,
      workflow: e.workflow,
    };
    return { row, notice: e.notice, handoff: e.handoff ? e.json : undefined, busy: e.busy };
  };

  /** Claims up to `limit` due, unclaimed ids (of a lane, of `ids`), earliest first, until `now` plus the lease. */
  const claim = (now: number, limit: number, query?: DueQuery, ids?: ReadonlySet<string>): string[] => {
    const n = kit.dueLimit(now, limit);
    const workflow = kit.dueWorkflow(query);
    const lease = kit.dueLease(query, claimMs);
    const out: string[] = [];
    if (n === null || workflow === null || ids?.size === 0) return out;
    for (const e of due) {
      if (e.at > now || out.length >= n) break;
      if (ids !== undefined && !ids.has(e.id)) continue;
      if (workflow !== undefined && rows.get(e.id)?.workflow !== workflow) continue;
      const until = claims.get(e.id);
      if (until !== undefined && until > now) continue;
      out.push(e.id);
    }
    for (const id of out) claims.set(id, now + lease);
    return out;
  };

  return {
    maxSnapshotBytes: kit.maxSnapshotBytes,
    claimsDue: true,
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
    setAvailable(value) {
      available = value;
    },
    async setup() {
      check();
    },
    async create(snapshot) {
      check();
      const { row, notice, handoff, busy } = encode(snapshot);
      kit.created(!rows.has(snapshot.id), snapshot.id);
      rows.set(snapshot.id, row);
      index(snapshot.id, row.wakeAt);
      announce(notice, row.workflow, snapshot.id, handoff, busy);
    },
    async load(id) {
      check();
      const row = rows.get(kit.id(id));
      return row ? kit.decode(row.json) : null;
    },
    async save(snapshot, expectedVersion) {
      check();
      const { row, notice, handoff, busy } = encode(snapshot);
      const current = rows.get(snapshot.id);
      if (!current || current.version !== expectedVersion) {
        kit.updated(current ? { stored: current.version } : 'missing', snapshot.id, expectedVersion);
        return; // not reached: `updated` throws for anything but a write
      }
      unindex(snapshot.id, current.wakeAt);
      rows.set(snapshot.id, row);
      index(snapshot.id, row.wakeAt);
      claims.delete(snapshot.id);
      announce(notice, row.workflow, snapshot.id, handoff, busy);
    },
    async listDue(now, limit, query) {
      check();
      return claim(now, limit, query);
    },
    async claimDue(now, limit, query) {
      check();
      const ids = query?.ids === undefined ? undefined : new Set(Array.from(query.ids, (id) => kit.id(id)));
      return claim(now, limit, query, ids).map((id) => kit.decode(rows.get(id)!.json));
    },
    async releaseDue(ids) {
      check();
      for (const id of ids) claims.delete(id);
    },
    async list(query: ListQuery): Promise<ListPage> {
      check();
      const args = kit.listArgs(query);
      if (!args) return { items: [], cursor: query.cursor || null };
      const matches: Array<{ id: string; json: string }> = [];
      for (const id of [...rows.keys()].sort()) {
        if (args.cursor !== null && id <= args.cursor) continue;
        const row = rows.get(id)!;
        if (args.status !== undefined && row.status !== args.status) continue;
        if (args.workflow !== undefined && row.workflow !== args.workflow) continue;
        matches.push({ id, json: row.json });
        if (matches.length > args.limit) break;
      }
      return kit.page(matches, args.limit);
    },
    async delete(id) {
      check();
      const row = rows.get(kit.id(id));
      if (!row) return false;
      unindex(id, row.wakeAt);
      rows.delete(id);
      claims.delete(id);
      return true;
    },
    async close() {},
  };
}
