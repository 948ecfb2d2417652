import type { ClaimsDriver, ClaimWindow, DueWindow } from '@stepfold/engine';
import type { Collection, Filter } from 'mongodb';
import { claimRounds } from './claim-rounds.js';
import type { InstanceDocument } from './encode.js';

// Ids per release command: keeps one $in far below the 16 MiB command limit.
const RELEASE_CHUNK = 1000;

/**
 * Unclaimed due instances at `now`, optionally of one workflow (the lane index's equality prefix)
 * or of named ones. A claim moves `dueAt` to its expiry, so one range on `dueAt` is both "due" and
 * "not claimed": claimed documents sit past `now` in the index and a poll never walks over them.
 */
export function dueFilter(now: number, workflow?: string, ids?: readonly string[]): Filter<InstanceDocument> {
  return {
    ...(workflow === undefined ? {} : { workflow }),
    ...(ids === undefined ? {} : { _id: { $in: [...ids] } }),
    dueAt: { $lte: now },
  };
}

/** `listDue`'s claim and the claims driver (claim-and-load, release by token) over `docs`. */
export function dueClaims(docs: Collection<InstanceDocument>): {
  due(window: DueWindow): Promise<string[]>;
  claims: ClaimsDriver;
} {
  const claim = (w: ClaimWindow, read?: Record<string, 1>) =>
    claimRounds(docs, {
      due: dueFilter(w.now, w.workflow, w.ids),
      key: 'dueAt',
      limit: w.limit,
      // claimedUntil repeats dueAt while claimed and shows the lease; the token says whose it is.
      set: { dueAt: w.until, claimedUntil: w.until, claimToken: w.token },
      nonce: 'claimCall',
      ...(read ? { read } : {}),
    });
  return {
    due: async (w) => (await claim(w)).map((d) => d._id),
    claims: {
      claim: async (w) => (await claim(w, { snapshot: 1 })).map((d) => d.snapshot),
      release: (ids, token) => release(docs, ids, token),
    },
  };
}

/**
 * Ends the claims on `ids` taken with `token` and puts each back at its stored wake time. FerretDB
 * 1.x has no pipeline updates (`$set: { dueAt: '$wakeAt' }`), so this reads the wake times, then
 * writes each conditional on the token and the wake time read: a save in between has already ended
 * the claim and set `dueAt` itself.
 */
async function release(
  docs: Collection<InstanceDocument>,
  ids: readonly string[],
  token: string,
): Promise<void> {
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += RELEASE_CHUNK) {
    const chunk = unique.slice(i, i + RELEASE_CHUNK);
    const claimed = await docs
      .find({ _id: { $in: chunk }, claimToken: token }, { projection: { wakeAt: 1 } })
      .toArray();
    if (claimed.length === 0) continue;
    await docs.bulkWrite(
      claimed.map((d) => ({
        updateOne: {
          filter: { _id: d._id, claimToken: token, wakeAt: d.wakeAt },
          update: { $set: { dueAt: d.wakeAt }, $unset: { claimedUntil: '', claimToken: '', claimCall: '' } },
        },
      })),
      { ordered: false },
    );
  }
}
