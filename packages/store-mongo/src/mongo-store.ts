import { type DefinedStore, defineStore } from '@stepfold/engine';
import type { Db, Filter } from 'mongodb';
import { dueClaims } from './due-claims.js';
import { type InstanceDocument, toDocument } from './encode.js';
import { type FlowKeyDocument, mongoFlow } from './flow.js';
import { matchFilter, mongoInbox, unsetSent } from './inbox.js';
import { isDuplicateKey, isUnavailable } from './map-error.js';
import { searchPage } from './search-filter.js';
import { assertCollectionName, ensureIndexes, isCollectionName } from './setup.js';
import { mongoStream, type StreamBatchDocument } from './stream.js';

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
  /** How long a claim lasts when the call sets no `leaseMs`, in ms against its `now` (default 30 000). */
  claimMs?: number | undefined;
  /**
   * Collection holding a document per flow counter (default the instances' collection name +
   * `_flow`). A collection name too long to take `_flow` gives a store without `flow` unless this
   * names one.
   */
  flowCollection?: string | undefined;
  /**
   * Collection holding the instances' streams, a document per append (default the instances'
   * collection name + `_stream`). A collection name too long to take `_stream` gives a store
   * without `stream` unless this names one.
   */
  streamCollection?: string | undefined;
}

/**
 * A stepfold store on MongoDB (or a wire-compatible server). Each instance is one document keyed by
 * its id, its inbox inside it; `save` is a single `updateOne` conditional on the stored version. It
 * has `claims`, an `inbox`, `flow` (a document per flow key in its own collection) and `stream` (a
 * document per append in its own collection), no `wakes`: workers and stream tails poll (see the README).
 */
export function createMongoStore(options: MongoStoreOptions): DefinedStore {
  const name = options.collection ?? DEFAULT_COLLECTION;
  assertCollectionName(name);
  const docs = options.db.collection<InstanceDocument>(name);
  const { due, claims } = dueClaims(docs);
  const flowName = options.flowCollection ?? `${name}_flow`;
  if (options.flowCollection !== undefined) assertCollectionName(flowName);
  const flow = isCollectionName(flowName)
    ? mongoFlow(options.db.collection<FlowKeyDocument>(flowName))
    : undefined;
  const streamName = options.streamCollection ?? `${name}_stream`;
  if (options.streamCollection !== undefined) assertCollectionName(streamName);
  const stream = isCollectionName(streamName)
    ? mongoStream(options.db.collection<StreamBatchDocument>(streamName))
    : undefined;
  const sizes = { asked: options.maxSnapshotBytes, fallback: DEFAULT_MAX_SNAPSHOT_BYTES };

  return defineStore(
    { name: 'mongodb', isUnavailable, sizes, claimMs: options.claimMs },
    {
      async setup() {
        await ensureIndexes(docs);
        await flow?.setup();
        await stream?.setup();
      },
      async insert(row) {
        try {
          await docs.insertOne(toDocument(row));
          return true;
        } catch (e) {
          if (isDuplicateKey(e)) return false;
          throw e;
        }
      },
      async select(id) {
        return (await docs.findOne({ _id: id }, { projection: { snapshot: 1 } }))?.snapshot ?? null;
      },
      async update(row, c) {
        // $set names only the fields a save owns: the inbox beside them is left to its own writes,
        // but for the signals this write applied. Rewriting the instance ends any claim on it.
        const { _id, ...fields } = toDocument(row);
        const unset = {
          claimedUntil: '',
          claimToken: '',
          claimCall: '',
          ...unsetSent(c.consumed ?? []),
        } as const;
        const r = await docs.updateOne(
          { _id, version: c.expected, ...matchFilter(c) },
          { $set: fields, $unset: unset },
        );
        return r.matchedCount === 1 ? 'written' : 'failed';
      },
      async version(id) {
        return (await docs.findOne({ _id: id }, { projection: { version: 1 } }))?.version ?? null;
      },
      due,
      searches: true,
      async page(args) {
        if (args.search) return searchPage(docs, args, args.search);
        const filter: Filter<InstanceDocument> = {};
        if (args.status !== undefined) filter.status = args.status;
        if (args.workflow !== undefined) filter.workflow = args.workflow;
        if (args.cursor) filter._id = { $gt: args.cursor };
        const found = await docs
          .find(filter, { projection: { snapshot: 1 } })
          .sort({ _id: 1 })
          .limit(args.limit + 1)
          .toArray();
        return found.map((d) => ({ id: d._id, json: d.snapshot }));
      },
      async remove(id, version) {
        // The inbox lives in the document: it goes with it.
        const filter = version === undefined ? { _id: id } : { _id: id, version };
        return (await docs.deleteOne(filter)).deletedCount === 1;
      },
      claims,
      inbox: mongoInbox(docs),
      ...(flow ? { flow } : {}),
      ...(stream ? { stream } : {}),
    },
  );
}
