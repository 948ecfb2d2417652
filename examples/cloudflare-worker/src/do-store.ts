/**
 * A stepfold `Store` over one Durable Object's transactional storage. A Durable Object holds
 * exactly one workflow instance (the Worker routes with `idFromName(instanceId)`), so the store
 * keeps one snapshot under one key. Every write also sets the object's alarm to the snapshot's
 * `wakeAt` (or deletes it), in the same storage transaction as the snapshot itself.
 */
import {
  AlreadyExistsError,
  assertValidId,
  type ListPage,
  type ListQuery,
  NotFoundError,
  type Snapshot,
  SnapshotTooLargeError,
  type Store,
  snapshotBytes,
  VersionConflictError,
} from '@stepfold/engine';

const KEY = 'snapshot';

/**
 * Durable Object storage values are limited to 128 KiB (key-value API); stay under it so a write
 * is refused by the store, not half-failed by the platform.
 */
export const DO_MAX_SNAPSHOT_BYTES = 128 * 1024 - 1024;

/** Stored value: the snapshot as JSON, so callers never share objects with storage. */
interface Row {
  json: string;
  version: number;
}

/** The store, plus a direct read of the one snapshot it holds (the alarm handler has no id to ask for). */
export interface DurableObjectStore extends Store {
  current(): Promise<Snapshot | null>;
}

export function createDurableObjectStore(storage: DurableObjectStorage): DurableObjectStore {
  const encode = (snapshot: Snapshot): Row => {
    assertValidId(snapshot.id);
    const json = JSON.stringify(snapshot);
    const bytes = snapshotBytes(json);
    if (bytes > DO_MAX_SNAPSHOT_BYTES)
      throw new SnapshotTooLargeError(snapshot.id, bytes, DO_MAX_SNAPSHOT_BYTES);
    return { json, version: snapshot.version };
  };
  const decode = (row: Row | undefined, id: string): Snapshot | null => {
    if (!row) return null;
    const s = JSON.parse(row.json) as Snapshot;
    return s.id === id ? s : null;
  };
  /** Puts the row and moves the alarm to the snapshot's wake time, atomically. */
  const write = async (txn: DurableObjectTransaction, snapshot: Snapshot, row: Row) => {
    await txn.put(KEY, row);
    if (snapshot.wakeAt === null) await txn.deleteAlarm();
    else await txn.setAlarm(snapshot.wakeAt);
  };

  return {
    maxSnapshotBytes: DO_MAX_SNAPSHOT_BYTES,
    async setup() {},
    async create(snapshot) {
      const row = encode(snapshot);
      await storage.transaction(async (txn) => {
        if ((await txn.get<Row>(KEY)) !== undefined) throw new AlreadyExistsError(snapshot.id);
        await write(txn, snapshot, row);
      });
    },
    async load(id) {
      assertValidId(id);
      return decode(await storage.get<Row>(KEY), id);
    },
    async save(snapshot, expectedVersion) {
      const row = encode(snapshot);
      await storage.transaction(async (txn) => {
        const current = decode(await txn.get<Row>(KEY), snapshot.id);
        if (!current) throw new NotFoundError(snapshot.id);
        if (current.version !== expectedVersion) {
          throw new VersionConflictError(snapshot.id, expectedVersion, current.version);
        }
        await write(txn, snapshot, row);
      });
    },
    async listDue(now, limit) {
      const row = await storage.get<Row>(KEY);
      if (!row || limit < 1) return [];
      const s = JSON.parse(row.json) as Snapshot;
      return s.wakeAt !== null && s.wakeAt <= now ? [s.id] : [];
    },
    async list(query: ListQuery): Promise<ListPage> {
      const row = await storage.get<Row>(KEY);
      if (!row || query.limit < 1) return { items: [], cursor: null };
      const s = JSON.parse(row.json) as Snapshot;
      const skip =
        (query.cursor && s.id <= query.cursor) ||
        (query.status && s.status !== query.status) ||
        (query.workflow && s.workflow.name !== query.workflow);
      return { items: skip ? [] : [s], cursor: null };
    },
    async delete(id, options) {
      assertValidId(id);
      return storage.transaction(async (txn) => {
        const current = decode(await txn.get<Row>(KEY), id);
        if (!current) return false;
        const expected = options?.version;
        if (expected !== undefined && current.version !== expected) {
          throw new VersionConflictError(id, expected, current.version);
        }
        await txn.delete(KEY);
        await txn.deleteAlarm();
        return true;
      });
    },
    async close() {},
    async current() {
      const row = await storage.get<Row>(KEY);
      return row ? (JSON.parse(row.json) as Snapshot) : null;
    },
  };
}
