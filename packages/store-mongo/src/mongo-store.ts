import { createStoreKit, type ListPage, type ListQuery, type Store } from '@stepfold/engine';
import type { Db, Filter } from 'mongodb';
import { claimDue, claimMsOf, releaseClaims } from './due.js';
import { type InstanceDocument, toDocument } from './encode.js';
import { isDuplicateKey, isUnavailable } from './map-error.js';
import { assertCollectionName, ensureIndexes } from './setup.js';

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
  collection?: string | undefined;
  /** Largest accepted snapshot, in UTF-8 bytes of its JSON (default 15 MiB, at most that). */
  maxSnapshotBytes?: number | undefined;
  /** How long ids returned by `listDue` stay claimed, in ms against its `now`, when the call sets no `leaseMs` (default 30 000). */
  claimMs?: number | undefined;
}

/**
 * A stepfold store on MongoDB (or a wire-compatible server). Each instance is one document keyed by
 * its id; `save` is a single `updateOne` conditional on the stored version. `listDue` claims what it
 * returns (`claimsDue`); there is no `wakes` source, so workers poll (see the README).
 */
export function createMongoStore(options: MongoStoreOptions): Store {
  const name = options.collection ?? DEFAULT_COLLECTION;
  assertCollectionName(name);
  const kit = createStoreKit('mongodb', isUnavailable, {
    asked: options.maxSnapshotBytes,
    fallback: DEFAULT_MAX_SNAPSHOT_BYTES,
  });
  const claimMs = claimMsOf(options.claimMs);
  const instances = options.db.collection<InstanceDocument>(name);

  return {
    maxSnapshotBytes: kit.maxSnapshotBytes,
    claimsDue: true,

    setup: () => ensureIndexes(instances, kit.guard),

    async create(snapshot) {
      const doc = toDocument(kit.encode(snapshot));
      try {
        await kit.guard('create', () => instances.insertOne(doc));
      } catch (e) {
        if (!isDuplicateKey(e)) throw e;
        kit.created(false, doc._id);
      }
    },

    async load(id) {
      const doc = await kit.guard('load', () =>
        instances.findOne({ _id: kit.id(id) }, { projection: { snapshot: 1 } }),
      );
      return doc ? kit.decode(doc.snapshot) : null;
    },

    async save(snapshot, expectedVersion) {
      const { _id, ...fields } = toDocument(kit.encode(snapshot));
      const result = await kit.guard('save', () =>
        // Rewriting the instance ends any listDue claim on it.
        instances.updateOne(
          { _id, version: expectedVersion },
          { $set: fields, $unset: { claimedUntil: '', claimToken: '' } },
        ),
      );
      if (result.matchedCount === 1) return;
      // The condition failed: tell a lost race from a missing instance.
      const current = await kit.guard('save', () =>
        instances.findOne({ _id }, { projection: { version: 1 } }),
      );
      kit.updated(current ? { stored: current.version } : 'missing', _id, expectedVersion);
    },

    async listDue(now, limit, query) {
      const n = kit.dueLimit(now, limit);
      const workflow = kit.dueWorkflow(query);
      // Checked before the early returns: a bad lease is refused whatever else the call asks.
      const leaseMs = kit.dueLease(query, claimMs);
      if (n === null || workflow === null) return [];
      return claimDue(instances, kit.guard, { now, limit: n, workflow, leaseMs });
    },

    releaseDue: (ids) => releaseClaims(instances, kit.guard, ids),

    async list(query: ListQuery): Promise<ListPage> {
      // The kit refuses non-string filters: an object here would become an operator.
      const args = kit.listArgs(query);
      if (!args) return { items: [], cursor: query.cursor || null };
      const filter: Filter<InstanceDocument> = {};
      if (args.status !== undefined) filter.status = args.status;
      if (args.workflow !== undefined) filter.workflow = args.workflow;
      if (args.cursor) filter._id = { $gt: args.cursor };
      const docs = await kit.guard('list', () =>
        instances
          .find(filter, { projection: { snapshot: 1 } })
          .sort({ _id: 1 })
          .limit(args.limit + 1)
          .toArray(),
      );
      return kit.page(
        docs.map((d) => ({ id: d._id, json: d.snapshot })),
        args.limit,
      );
    },

    async delete(id) {
      const result = await kit.guard('delete', () => instances.deleteOne({ _id: kit.id(id) }));
      return result.deletedCount === 1;
    },

    async close() {
      // The MongoClient belongs to the caller.
    },
  };
}
