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

/** Unclaimed due instances at `now`, optionally of one workflow (the lane index's equality prefix). */
export function dueFilter(now: number, workflow: string | undefined): Filter<InstanceDocument> {
  return {
    ...(workflow === undefined ? {} : { workflow }),
    wakeAt: { $ne: null, $lte: now },
    // `null` also matches a missing field: never claimed, or the claim ended with a save or release.
    $or: [{ claimedUntil: null }, { claimedUntil: { $lte: now } }],
  };
}

/**
 * Finds the earliest unclaimed due ids and claims them until `now + leaseMs`. The claim is one
 * `updateMany` whose filter repeats the due-and-unclaimed condition, so each document is claimed
 * atomically by at most one caller; a random token written with it tells which ones this call won.
 */
export async function claimDue(
  collection: Collection<InstanceDocument>,
  guard: StoreKit['guard'],
  args: { now: number; limit: number; workflow: string | undefined; leaseMs: number },
): Promise<string[]> {
  const { now, limit, workflow } = args;
  const token = randomUUID();
  const claim = { $set: { claimedUntil: now + args.leaseMs, claimToken: token } };
  const won: string[] = [];
  for (let round = 0; round < CLAIM_ROUNDS && won.length < limit; round++) {
    const want = limit - won.length;
    const filter = dueFilter(now, workflow);
    const candidates = await guard('listDue', () =>
      collection
        .find(filter, { projection: { _id: 1 } })
        .sort({ wakeAt: 1, _id: 1 })
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

/** Clears the claims on `ids` (invalid ids name no document and are skipped). */
export async function releaseClaims(
  collection: Collection<InstanceDocument>,
  guard: StoreKit['guard'],
  ids: readonly string[],
): Promise<void> {
  const valid = ids.filter((id) => isValidId(id));
  for (let i = 0; i < valid.length; i += RELEASE_CHUNK) {
    const chunk = valid.slice(i, i + RELEASE_CHUNK);
    await guard('releaseDue', () =>
      collection.updateMany({ _id: { $in: chunk } }, { $unset: { claimedUntil: '', claimToken: '' } }),
    );
  }
}
