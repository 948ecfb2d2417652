import {
  AlreadyExistsError,
  NotFoundError,
  SnapshotTooLargeError,
  StoreUnavailableError,
  VersionConflictError,
} from '../errors.js';
import { assertValidId } from '../ids.js';
import type { Snapshot } from '../snapshot.js';
import { type ListPage, type ListQuery, type Store, snapshotBytes } from './store.js';

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /** Size limit in bytes of a serialized snapshot (default 1 MiB). */
  maxSnapshotBytes?: number;
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
  const maxSnapshotBytes = options.maxSnapshotBytes ?? 1024 * 1024;
  const rows = new Map<string, Row>();
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
  const toRow = (snapshot: Snapshot): Row => {
    const json = JSON.stringify(snapshot);
    const bytes = snapshotBytes(json);
    if (bytes > maxSnapshotBytes) throw new SnapshotTooLargeError(snapshot.id, bytes, maxSnapshotBytes);
    return {
      json,
      version: snapshot.version,
      wakeAt: snapshot.wakeAt,
      status: snapshot.status,
      workflow: snapshot.workflow.name,
    };
  };

  return {
    maxSnapshotBytes,
    setAvailable(value) {
      available = value;
    },
    async setup() {
      check();
    },
    async create(snapshot) {
      check();
      assertValidId(snapshot.id);
      const row = toRow(snapshot);
      if (rows.has(snapshot.id)) throw new AlreadyExistsError(snapshot.id);
      rows.set(snapshot.id, row);
      index(snapshot.id, row.wakeAt);
    },
    async load(id) {
      check();
      assertValidId(id);
      const row = rows.get(id);
      return row ? (JSON.parse(row.json) as Snapshot) : null;
    },
    async save(snapshot, expectedVersion) {
      check();
      assertValidId(snapshot.id);
      const row = toRow(snapshot);
      const current = rows.get(snapshot.id);
      if (!current) throw new NotFoundError(snapshot.id);
      if (current.version !== expectedVersion) {
        throw new VersionConflictError(snapshot.id, expectedVersion, current.version);
      }
      unindex(snapshot.id, current.wakeAt);
      rows.set(snapshot.id, row);
      index(snapshot.id, row.wakeAt);
    },
    async listDue(now, limit) {
      check();
      const out: string[] = [];
      for (const e of due) {
        if (e.at > now || out.length >= limit) break;
        out.push(e.id);
      }
      return out;
    },
    async list(query: ListQuery): Promise<ListPage> {
      check();
      const ids = [...rows.keys()].sort();
      const items: Snapshot[] = [];
      let cursor: string | null = null;
      for (const id of ids) {
        if (query.cursor && id <= query.cursor) continue;
        const row = rows.get(id)!;
        if (query.status && row.status !== query.status) continue;
        if (query.workflow && row.workflow !== query.workflow) continue;
        if (items.length === query.limit) {
          cursor = items[items.length - 1]!.id;
          break;
        }
        items.push(JSON.parse(row.json) as Snapshot);
      }
      return { items, cursor };
    },
    async delete(id) {
      check();
      assertValidId(id);
      const row = rows.get(id);
      if (!row) return false;
      unindex(id, row.wakeAt);
      rows.delete(id);
      return true;
    },
    async close() {},
  };
}
