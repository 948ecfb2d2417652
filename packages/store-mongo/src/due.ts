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

/** What {@link claimDue} claimed: the id and, when asked for, the stored JSON read with the claim. */
export interface Claimed {
  _id: string;
  snapshot?: string;
}

/**
 * Finds the earliest unclaimed due instances (of a lane, of the `ids` given) and claims them until
 * `now + claimMs`. The claim is one `updateMany` whose filter repeats the due-and-unclaimed
 * condition, so each document is claimed atomically by at most one caller; a random token written
 * with it tells which ones this call won. With `snapshots`, each comes with its stored JSON, read
 * in the same queries (claimDue): read just before the claim, so a write in between makes it one
 * version stale, which the caller's conditional save notices.
 */
export async function claimDue(
  collection: Collection<InstanceDocument>,
  guard: StoreKit['guard'],
  args: {
    now: number;
    limit: number;
    workflow: string | undefined;
    claimMs: number;
    ids?: readonly string[] | undefined;
    snapshots?: boolean;
  },
): Promise<Claimed[]> {
  const { now, limit, workflow } = args;
  const token = randomUUID();
  const claim = { $set: { claimedUntil: now + args.claimMs, claimToken: token } };
  const projection = args.snapshots ? { _id: 1, snapshot: 1 } : { _id: 1 };
  const what = args.snapshots ? 'claimDue' : 'listDue';
  const won: Claimed[] = [];
  for (let round = 0; round < CLAIM_ROUNDS && won.length < limit; round++) {
    const want = limit - won.length;
    const filter: Filter<InstanceDocument> = {
      ...dueFilter(now, workflow),
      ...(args.ids === undefined ? {} : { _id: { $in: [...args.ids] } }),
    };
    const candidates = await guard(what, () =>
      collection.find(filter, { projection }).sort({ wakeAt: 1, _id: 1 }).limit(want).toArray(),
    );
    const ids = candidates.map((d) => d._id);
    if (ids.length === 0) break;
    const result = await guard(what, () => collection.updateMany({ ...filter, _id: { $in: ids } }, claim));
    if (result.matchedCount === ids.length) {
      won.push(...candidates);
    } else {
      // Another worker took some in between: keep the ones carrying this call's token, in order.
      const mine = await guard(what, () =>
        collection.find({ _id: { $in: ids }, claimToken: token }, { projection }).toArray(),
      );
      const kept = new Map(mine.map((d) => [d._id, d]));
      for (const id of ids) if (kept.has(id)) won.push(kept.get(id)!);
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
