/**
 * A stepfold `Store` over one Durable Object's storage. A Durable Object holds exactly one workflow
 * instance (the Worker addresses it with `idFromName(instanceId)`), so the store keeps one snapshot
 * under one key. Every write also moves the object's alarm to the snapshot's `wakeAt`, or deletes
 * it when there is none or the instance is final, in the same storage transaction as the snapshot.
 */
import {
  AlreadyExistsError,
  assertValidId,
  checkSearch,
  type FlowStore,
  flowCounters,
  flowHolders,
  isTerminal,
  type ListPage,
  type ListQuery,
  matchesSearch,
  NotFoundError,
  type Snapshot,
  SnapshotTooLargeError,
  type Store,
  snapshotBytes,
  VersionConflictError,
} from '@stepfold/engine';
import type { DurableStorage, StorageTransaction } from './platform.js';

/** The storage key of the snapshot. */
export const SNAPSHOT_KEY = 'stepfold:snapshot';

/**
 * The default snapshot limit: a key-value storage value is limited to 128 KiB on a KV-backed
 * Durable Object, so a larger write is refused by the store (`SNAPSHOT_TOO_LARGE`, nothing
 * written), never half-failed by the platform. SQLite-backed objects take larger values.
 */
export const DO_MAX_SNAPSHOT_BYTES = 128 * 1024 - 1024;

/** Options of {@link createDurableObjectStore}. */
export interface DurableObjectStoreOptions {
  /** The largest snapshot JSON, in UTF-8 bytes, a write accepts (default {@link DO_MAX_SNAPSHOT_BYTES}). */
  maxSnapshotBytes?: number | undefined;
  /** The deployment's flow counts (`createDurableFlowStore`): the store's `flow`, for limited workflows. */
  flow?: FlowStore | undefined;
}

/** The stored value: the snapshot as JSON, so callers never share objects with storage. */
interface Row {
  json: string;
  version: number;
}

/** The store, plus a direct read of the one snapshot it holds (an alarm has no id to ask for). */
export interface DurableObjectStore extends Store {
  /** The snapshot this object holds, whatever its id, or null. */
  current(): Promise<Snapshot | null>;
}

/** When the alarm should ring for this snapshot: its `wakeAt`, or never once it is final. */
export function alarmFor(snapshot: Pick<Snapshot, 'status' | 'wakeAt'>): number | null {
  return isTerminal(snapshot.status) ? null : snapshot.wakeAt;
}

/** A store over `storage` (a Durable Object's `ctx.storage`) holding that object's one instance. */
export function createDurableObjectStore(
  storage: DurableStorage,
  options: DurableObjectStoreOptions = {},
): DurableObjectStore {
  const max = options.maxSnapshotBytes ?? DO_MAX_SNAPSHOT_BYTES;
  const flow = options.flow;
  const encode = (snapshot: Snapshot): Row => {
    assertValidId(snapshot.id);
    const json = JSON.stringify(snapshot);
    const bytes = snapshotBytes(json);
    if (bytes > max) throw new SnapshotTooLargeError(snapshot.id, bytes, max);
    return { json, version: snapshot.version };
  };
  const parse = (row: Row | undefined): Snapshot | null => (row ? (JSON.parse(row.json) as Snapshot) : null);
  const decode = (row: Row | undefined, id: string): Snapshot | null => {
    const s = parse(row);
    return s?.id === id ? s : null;
  };
  /** Puts the row and moves the alarm to the snapshot's wake time, atomically. */
  const write = async (txn: StorageTransaction, snapshot: Snapshot, row: Row) => {
    await txn.put(SNAPSHOT_KEY, row);
    const at = alarmFor(snapshot);
    if (at === null) await txn.deleteAlarm();
    else await txn.setAlarm(at);
  };

  return {
    maxSnapshotBytes: max,
    ...(flow ? { flow } : {}),
    async setup() {},
    async create(snapshot) {
      const row = encode(snapshot);
      await storage.transaction(async (txn) => {
        if ((await txn.get<Row>(SNAPSHOT_KEY)) !== undefined) throw new AlreadyExistsError(snapshot.id);
        await write(txn, snapshot, row);
      });
    },
    async load(id) {
      assertValidId(id);
      return decode(await storage.get<Row>(SNAPSHOT_KEY), id);
    },
    async save(snapshot, expectedVersion) {
      const row = encode(snapshot);
      await storage.transaction(async (txn) => {
        const current = decode(await txn.get<Row>(SNAPSHOT_KEY), snapshot.id);
        if (!current) throw new NotFoundError(snapshot.id);
        // Two requests can interleave inside one object while a handler awaits I/O: the version
        // check makes the later writer reload and re-apply, as the runner expects of any store.
        if (current.version !== expectedVersion) {
          throw new VersionConflictError(snapshot.id, expectedVersion, current.version);
        }
        await write(txn, snapshot, row);
      });
    },
    async listDue(now, limit) {
      const s = parse(await storage.get<Row>(SNAPSHOT_KEY));
      if (!s || limit < 1) return [];
      const at = alarmFor(s);
      return at !== null && at <= now ? [s.id] : [];
    },
    async list(query: ListQuery): Promise<ListPage> {
      const s = parse(await storage.get<Row>(SNAPSHOT_KEY));
      if (!s || query.limit < 1) return { items: [], cursor: null };
      // One instance: its search attributes are checked here, no index needed.
      const search =
        query.where !== undefined || query.orderBy !== undefined
          ? checkSearch(query.where, query.orderBy)
          : undefined;
      const row = { status: s.status, workflow: s.workflow.name, search: s.search ?? null };
      const skip =
        (query.cursor && search?.orderBy === undefined && s.id <= query.cursor) ||
        (query.cursor && search?.orderBy !== undefined) ||
        (query.status && s.status !== query.status) ||
        (query.workflow && s.workflow.name !== query.workflow) ||
        (search && !matchesSearch(row, search));
      return { items: skip ? [] : [s], cursor: null };
    },
    async delete(id, options) {
      assertValidId(id);
      const gone = await storage.transaction(async (txn) => {
        const current = decode(await txn.get<Row>(SNAPSHOT_KEY), id);
        if (!current) return null;
        const expected = options?.version;
        if (expected !== undefined && current.version !== expected) {
          throw new VersionConflictError(id, expected, current.version);
        }
        await txn.delete(SNAPSHOT_KEY);
        await txn.deleteAlarm();
        return current;
      });
      // The slots it held go with it (an instance limit never lapses by itself).
      if (gone && flow) {
        const holders = flowHolders(gone);
        if (holders.length) await flow.release(holders, Date.now(), flowCounters(holders, gone));
      }
      return gone !== null;
    },
    async close() {},
    async current() {
      return parse(await storage.get<Row>(SNAPSHOT_KEY));
    },
  };
}
