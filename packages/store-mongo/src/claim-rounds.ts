import { randomUUID } from 'node:crypto';
import type { Collection, Filter } from 'mongodb';
import type { InstanceDocument } from './encode.js';

// A round claims what its candidates still allow; racing workers can take some of them, so another
// round reads the next candidates. Bounded: a caller that keeps losing gets a short batch, not a loop.
const CLAIM_ROUNDS = 3;

/** What {@link claimRounds} claims and how. */
export interface ClaimSpec {
  /** Due and unclaimed: a range on `key` that `set` moves every claimed document out of. */
  due: Filter<InstanceDocument>;
  key: 'dueAt' | 'sentDueAt';
  limit: number;
  /** The claim's fields; the call's nonce is added under `nonce`. */
  set: Partial<InstanceDocument>;
  nonce: 'claimCall' | 'sentClaim';
  /** Of the due, claim only these; the rest get `idle` (which must move them out of the range). */
  ready?: { filter: Filter<InstanceDocument>; idle: Filter<InstanceDocument>; unset: Record<string, ''> };
  /** Fields to read from the documents won, after the claim; without it, ids only. */
  read?: Record<string, 1>;
}

/**
 * Claims up to `limit` due documents, earliest first: a `find` of candidate ids, then one
 * `updateMany` whose filter repeats the due condition, so each document goes to one caller only
 * (the write takes it out of the range). A random nonce written with it tells which ones this call
 * won; they are read back by it when some were lost or their fields are wanted.
 */
export async function claimRounds(
  docs: Collection<InstanceDocument>,
  o: ClaimSpec,
): Promise<InstanceDocument[]> {
  const call = randomUUID();
  const claim = { $set: { ...o.set, [o.nonce]: call } };
  const won: InstanceDocument[] = [];
  for (let round = 0; round < CLAIM_ROUNDS && won.length < o.limit; round++) {
    const want = o.limit - won.length;
    const found = await docs
      .find(o.due, { projection: { _id: 1 } })
      .sort({ [o.key]: 1, _id: 1 })
      .limit(want)
      .toArray();
    const ids = found.map((d) => d._id);
    if (ids.length === 0) break;
    const among: Filter<InstanceDocument> = { ...o.due, _id: { $in: ids } };
    const { matchedCount } = await docs.updateMany({ ...among, ...o.ready?.filter }, claim);
    if (o.ready && matchedCount < ids.length)
      await docs.updateMany({ ...among, ...o.ready.idle }, { $unset: o.ready.unset });
    if (matchedCount === ids.length && !o.read) won.push(...found);
    else if (matchedCount > 0) {
      const mine = await docs
        .find({ _id: { $in: ids }, [o.nonce]: call }, { projection: o.read ?? { _id: 1 } })
        .toArray();
      const byId = new Map(mine.map((d) => [d._id, d]));
      won.push(...ids.flatMap((id) => byId.get(id) ?? []));
    }
    if (ids.length < want) break; // nothing more is due
  }
  return won;
}
