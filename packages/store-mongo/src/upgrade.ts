import type { AnyBulkWriteOperation, Collection } from 'mongodb';
import type { InstanceDocument } from './encode.js';

// Documents read and written per page of the backfill.
const PAGE = 500;
// Times one page is read again because documents changed under it, before giving up.
const PAGE_RETRIES = 5;

/**
 * Where a document written before `dueAt` existed sits in the due order: its wake time, or a
 * still-running claim's expiry when that is later (such a claim was taken by the old version).
 */
export function legacyDueAt(doc: Pick<InstanceDocument, 'wakeAt' | 'claimedUntil'>): number | null {
  const { wakeAt, claimedUntil } = doc;
  if (typeof wakeAt !== 'number') return null;
  return typeof claimedUntil === 'number' && claimedUntil > wakeAt ? claimedUntil : wakeAt;
}

/**
 * Sets `dueAt` on every document that lacks it, walking the collection once in `_id` order. Each
 * write is conditional on the fields it was computed from, so a save or claim racing it wins; a
 * page where some writes did not match is read again (what is still without `dueAt` is redone).
 * Old-version processes writing throughout can keep that from settling: then it throws.
 * Returns how many documents it filled in.
 */
export async function backfillDueAt(collection: Collection<InstanceDocument>): Promise<number> {
  let filled = 0;
  let after = ''; // sorts before every valid id
  for (let retries = 0; ; ) {
    const docs = await collection
      .find(
        { _id: { $gt: after }, dueAt: { $exists: false } },
        { projection: { wakeAt: 1, claimedUntil: 1 } },
      )
      .sort({ _id: 1 })
      .limit(PAGE)
      .toArray();
    const last = docs.at(-1);
    if (last === undefined) return filled;
    const writes: AnyBulkWriteOperation<InstanceDocument>[] = docs.map((d) => ({
      updateOne: {
        filter: {
          _id: d._id,
          dueAt: { $exists: false },
          wakeAt: d.wakeAt ?? null,
          claimedUntil: d.claimedUntil ?? null,
        },
        update: { $set: { dueAt: legacyDueAt(d) } },
      },
    }));
    const result = await collection.bulkWrite(writes, { ordered: false });
    filled += result.modifiedCount;
    if (result.matchedCount < docs.length) {
      // Thrown before setup creates the due index or drops the old ones: the next setup walks again.
      if (++retries > PAGE_RETRIES) {
        throw new Error(
          `MongoDB collection ${collection.collectionName}: dueAt backfill kept racing writes; run setup again`,
        );
      }
      continue;
    }
    after = last._id;
    retries = 0;
  }
}
