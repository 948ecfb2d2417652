import { randomUUID } from 'node:crypto';
import { isValidId, type StoreKit } from '@stepfold/engine';
import type { Collection, Filter } from 'mongodb';
import type { InstanceDocument } from './encode.js';

/** Default lease of an id returned by `listDue`, in ms against its `now`. */
export const DEFAULT_CLAIM_MS = 30_000;

// A round claims what its candidates still allow; racing workers can take some of them, so another
// round reads the next candidates. Bounded: a caller that keeps losing gets a short batch, not a loop.
const CLAIM_ROUNDS = 3;
// Ids per releaseDue command: keeps one $in far below the 16 MiB command limit.
const RELEASE_CHUNK = 1000;

/** Checks the `claimMs` option: a positive finite number of milliseconds. */
export function claimMsOf(value: number | undefined): number {
  const ms = value ?? DEFAULT_CLAIM_MS;
  if (!(typeof ms === 'number' && Number.isFinite(ms) && ms > 0)) {
    throw new RangeError('claimMs must be a positive number of milliseconds');
  }
  return ms;
}

/**
 * Unclaimed due instances at `now`, optionally of one workflow (the lane index's equality prefix).
 * A claim moves `dueAt` to its expiry, so one range on `dueAt` is both "due" and "not claimed":
 * claimed documents sit past `now` in the index and a poll never walks over them.
 */
export function dueFilter(now: number, workflow: string | undefined): Filter<InstanceDocument> {
  return { ...(workflow === undefined ? {} : { workflow }), dueAt: { $lte: now } };
}

/**
 * Finds the earliest unclaimed due ids and claims them until `now + leaseMs`, moving their `dueAt`
 * there. The claim is one `updateMany` whose filter repeats the due condition, so each document is
 * claimed atomically by at most one caller; a random token written with it tells which ones this
 * call won.
 */
export async function claimDue(
  collection: Collection<InstanceDocument>,
  guard: StoreKit['guard'],
  args: { now: number; limit: number; workflow: string | undefined; leaseMs: number },
): Promise<string[]> {
  const { now, limit, workflow } = args;
  const token = randomUUID();
  const until = now + args.leaseMs;
  // claimedUntil repeats dueAt while claimed: releaseDue finds claims by it, and it shows the lease.
  const claim = { $set: { dueAt: until, claimedUntil: until, claimToken: token } };
  const won: string[] = [];
  for (let round = 0; round < CLAIM_ROUNDS && won.length < limit; round++) {
    const want = limit - won.length;
    const filter = dueFilter(now, workflow);
    const candidates = await guard('listDue', () =>
      collection
        .find(filter, { projection: { _id: 1 } })
        .sort({ dueAt: 1, _id: 1 })
        .limit(want)
        .toArray(),
    );
    const ids = candidates.map((d) => d._id);
    if (ids.length === 0) break;
    const result = await guard('listDue', () =>
      collection.updateMany({ ...filter, _id: { $in: ids } }, claim),
    );
    if (result.matchedCount === ids.length) {
      won.push(...ids);
    } else {
      // Another worker took some in between: keep the ones carrying this call's token, in order.
      const mine = await guard('listDue', () =>
        collection.find({ _id: { $in: ids }, claimToken: token }, { projection: { _id: 1 } }).toArray(),
      );
      const kept = new Set(mine.map((d) => d._id));
      won.push(...ids.filter((id) => kept.has(id)));
    }
    if (ids.length < want) break; // nothing more is due
  }
  return won;
}

/**
 * Ends the claims on `ids` and puts each back at its stored wake time (invalid ids name no document
 * and are skipped). FerretDB 1.x has no pipeline updates (`$set: { dueAt: '$wakeAt' }`), so this
 * reads the wake times, then writes each conditional on the wake time read: a save in between
 * has already ended the claim and set `dueAt` itself.
 */
export async function releaseClaims(
  collection: Collection<InstanceDocument>,
  guard: StoreKit['guard'],
  ids: readonly string[],
): Promise<void> {
  const valid = [...new Set(ids.filter((id) => isValidId(id)))];
  for (let i = 0; i < valid.length; i += RELEASE_CHUNK) {
    const chunk = valid.slice(i, i + RELEASE_CHUNK);
    const claimed = await guard('releaseDue', () =>
      collection
        .find({ _id: { $in: chunk }, claimedUntil: { $exists: true } }, { projection: { wakeAt: 1 } })
        .toArray(),
    );
    if (claimed.length === 0) continue;
    await guard('releaseDue', () =>
      collection.bulkWrite(
        claimed.map((d) => ({
          updateOne: {
            filter: { _id: d._id, wakeAt: d.wakeAt },
            update: { $set: { dueAt: d.wakeAt }, $unset: { claimedUntil: '', claimToken: '' } },
          },
        })),
        { ordered: false },
      ),
    );
  }
}
