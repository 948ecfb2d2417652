import { definePayloadStore, type PayloadDriver, type PayloadStore } from '@stepfold/engine';
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey, isUnavailable } from './map-error.js';
import { assertCollectionName } from './setup.js';

/** Default payload collection name. */
export const DEFAULT_PAYLOAD_COLLECTION = 'stepfold_payloads';

/**
 * Default (and highest) body limit: 16 MiB less 16 KiB. A BSON document holds at most 16 MiB; the
 * body is one BSON string (its UTF-8 bytes plus 5), and the rest covers the `_id` (an owner of at
 * most 200 characters and a hash) and the field names.
 */
export const DEFAULT_MAX_PAYLOAD_BYTES = 16 * 1024 * 1024 - 16 * 1024;

/** Options of {@link createMongoPayloadStore}. */
export interface MongoPayloadStoreOptions {
  /** The database to use; the caller owns its `MongoClient` and closes it. */
  db: Db;
  /** Collection holding one document per payload (default `stepfold_payloads`). */
  collection?: string | undefined;
  /** Largest accepted body, in UTF-8 bytes (default and most: 16 MiB less 16 KiB). */
  maxPayloadBytes?: number | undefined;
}

/** A MongoDB-backed payload store, and its collection. */
export interface MongoPayloadStore extends PayloadStore {
  /** Payload collection name. */
  readonly collection: string;
}

/** A stored payload: `_id` is `<owner>\n<sha256>`, so one owner's payloads are one `_id` range. */
export interface PayloadDocument {
  _id: string;
  body: string;
  bytes: number;
}

// "\n" sorts below every character an owner may hold, so `<owner>\n…` never interleaves with the
// ids of an owner that merely starts with it (`a/b\n…` sorts after every `a\n…`), and "\v" is the
// range's end.
const idOf = (owner: string, sha256: string) => `${owner}\n${sha256}`;
const rangeOf = (owner: string, after: string | null) => ({
  [after === null ? '$gte' : '$gt']: after === null ? `${owner}\n` : idOf(owner, after),
  $lt: `${owner}\v`,
});

/**
 * A payload store on MongoDB (or FerretDB): one document per payload in its own collection, keyed
 * `_id: "<owner>\n<sha256>"`, so lookups, ordered listing and collecting an owner are all on the
 * `_id` index (an `_id` range, never a regex); inserts that find the pair stored (duplicate key)
 * are the idempotent no-op. `setup()` creates the collection; there is no other index.
 *
 * @example
 * const payloads = createMongoPayloadStore({ db: client.db('app') });
 * await payloads.setup();
 * await payloads.put('order-1', sha256Hex(json), json);
 */
export function createMongoPayloadStore(options: MongoPayloadStoreOptions): MongoPayloadStore {
  const name = options.collection ?? DEFAULT_PAYLOAD_COLLECTION;
  assertCollectionName(name);
  const docs: Collection<PayloadDocument> = options.db.collection<PayloadDocument>(name);

  const driver: PayloadDriver = {
    async setup() {
      try {
        await options.db.createCollection(name);
      } catch (e) {
        // 48: NamespaceExists (another setup, or an earlier one, made it).
        if ((e as { code?: unknown })?.code !== 48) throw e;
      }
    },
    async put({ owner, sha256, body, bytes }) {
      try {
        await docs.insertOne({ _id: idOf(owner, sha256), body, bytes });
      } catch (e) {
        // The pair is there: the same body (immutable content), stored by this put's twin.
        if (!isDuplicateKey(e)) throw e;
      }
    },
    async get(owner, sha256) {
      return (await docs.findOne({ _id: idOf(owner, sha256) }, { projection: { body: 1 } }))?.body ?? null;
    },
    async list(owner, after, limit) {
      const found = await docs
        .find({ _id: rangeOf(owner, after) }, { projection: { _id: 1 } })
        .sort({ _id: 1 })
        .limit(limit)
        .toArray();
      return found.map((d) => d._id.slice(owner.length + 1));
    },
    async delete(owner, sha256s) {
      const r = await docs.deleteMany({ _id: { $in: sha256s.map((h) => idOf(owner, h)) } });
      return r.deletedCount;
    },
    async deleteOwner(owner) {
      return (await docs.deleteMany({ _id: rangeOf(owner, null) })).deletedCount;
    },
  };
  return definePayloadStore(
    {
      name: 'mongodb payloads',
      isUnavailable,
      sizes: { asked: options.maxPayloadBytes, fallback: DEFAULT_MAX_PAYLOAD_BYTES },
    },
    driver,
    { collection: name },
  );
}
