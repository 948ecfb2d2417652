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
import type { Db, Filter } from 'mongodb';
import { guard, isDuplicateKey } from './map-error.js';
import { assertCollectionName, ensureIndexes, type InstanceDocument } from './schema.js';

/**
 * Default size limit: 15 MiB of snapshot JSON. A BSON document may hold at most 16 MiB; the JSON is
 * stored as one BSON string (its UTF-8 bytes plus 5), and the 1 MiB left over covers the other fields
 * and the update command wrapped around the document with room to spare.
 */
export const DEFAULT_MAX_SNAPSHOT_BYTES = 15 * 1024 * 1024;

/** Default collection name. */
export const DEFAULT_COLLECTION = 'stepfold_instances';

/** Options of {@link createMongoStore}. */
export interface MongoStoreOptions {
  /** The database to use; the caller owns its `MongoClient` and closes it. */
  db: Db;
  /** Collection holding one document per instance (default `stepfold_instances`). */
  collection?: string;
  /** Largest accepted snapshot, in UTF-8 bytes of its JSON (default 15 MiB, at most that). */
  maxSnapshotBytes?: number;
}

/**
 * A stepfold store on MongoDB (or a wire-compatible server). Each instance is one document keyed by
 * its id; `save` is a single `updateOne` conditional on the stored version.
 */
export function createMongoStore(options: MongoStoreOptions): Store {
  const name = options.collection ?? DEFAULT_COLLECTION;
  assertCollectionName(name);
  const maxSnapshotBytes = options.maxSnapshotBytes ?? DEFAULT_MAX_SNAPSHOT_BYTES;
  if (!(maxSnapshotBytes > 0 && maxSnapshotBytes <= DEFAULT_MAX_SNAPSHOT_BYTES)) {
    throw new RangeError(`maxSnapshotBytes must be in 1..${DEFAULT_MAX_SNAPSHOT_BYTES}`);
  }
  const instances = options.db.collection<InstanceDocument>(name);

  // Validates and serializes before anything is sent, so a rejected snapshot never reaches the server.
  const toDocument = (snapshot: Snapshot): InstanceDocument => {
    assertValidId(snapshot.id);
    const json = JSON.stringify(snapshot);
    const bytes = snapshotBytes(json);
    if (bytes > maxSnapshotBytes) throw new SnapshotTooLargeError(snapshot.id, bytes, maxSnapshotBytes);
    return {
      _id: snapshot.id,
      version: snapshot.version,
      status: snapshot.status,
      workflow: snapshot.workflow.name,
      // JSON has no Infinity or NaN: index what `load` will give back.
      wakeAt: Number.isFinite(snapshot.wakeAt) ? snapshot.wakeAt : null,
      snapshot: json,
    };
  };

  return {
    maxSnapshotBytes,

    async setup() {
      await ensureIndexes(instances);
    },

    async create(snapshot) {
      const doc = toDocument(snapshot);
      try {
        await guard('create', () => instances.insertOne(doc));
      } catch (e) {
        if (isDuplicateKey(e)) throw new AlreadyExistsError(snapshot.id);
        throw e;
      }
    },

    async load(id) {
      assertValidId(id);
      const doc = await guard('load', () => instances.findOne({ _id: id }, { projection: { snapshot: 1 } }));
      return doc ? (JSON.parse(doc.snapshot) as Snapshot) : null;
    },

    async save(snapshot, expectedVersion) {
      const { _id, ...fields } = toDocument(snapshot);
      const result = await guard('save', () =>
        instances.updateOne({ _id, version: expectedVersion }, { $set: fields }),
      );
      if (result.matchedCount === 1) return;
      // The condition failed: tell a lost race from a missing instance.
      const current = await guard('save', () => instances.findOne({ _id }, { projection: { version: 1 } }));
      if (!current) throw new NotFoundError(_id);
      throw new VersionConflictError(_id, expectedVersion, current.version);
    },

    async listDue(now, limit) {
      if (typeof now !== 'number' || Number.isNaN(now)) throw new RangeError('listDue: now must be a number');
      if (limit <= 0) return [];
      const docs = await guard('listDue', () =>
        instances
          .find({ wakeAt: { $ne: null, $lte: now } }, { projection: { _id: 1 } })
          .sort({ wakeAt: 1, _id: 1 })
          .limit(limit)
          .toArray(),
      );
      return docs.map((d) => d._id);
    },

    async list(query: ListQuery): Promise<ListPage> {
      if (query.limit <= 0) return { items: [], cursor: query.cursor ?? null };
      // Values only ever land in equality or $gt positions, but an object here would become an operator.
      for (const key of ['status', 'workflow', 'cursor'] as const) {
        const value = query[key];
        if (value !== undefined && value !== null && typeof value !== 'string') {
          throw new TypeError(`list: ${key} must be a string`);
        }
      }
      const filter: Filter<InstanceDocument> = {};
      if (query.status !== undefined) filter.status = query.status;
      if (query.workflow !== undefined) filter.workflow = query.workflow;
      if (query.cursor) filter._id = { $gt: query.cursor };
      // One extra document tells whether another page exists.
      const docs = await guard('list', () =>
        instances
          .find(filter, { projection: { snapshot: 1 } })
          .sort({ _id: 1 })
          .limit(query.limit + 1)
          .toArray(),
      );
      const page = docs.slice(0, query.limit);
      const items = page.map((d) => JSON.parse(d.snapshot) as Snapshot);
      const cursor = docs.length > query.limit ? (page[page.length - 1]?._id ?? null) : null;
      return { items, cursor };
    },

    async delete(id) {
      assertValidId(id);
      const result = await guard('delete', () => instances.deleteOne({ _id: id }));
      return result.deletedCount === 1;
    },

    async close() {
      // The MongoClient belongs to the caller.
    },
  };
}
