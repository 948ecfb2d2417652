import { randomInt } from 'node:crypto';
import type { InboxDriver, SentRow, UpdateCondition } from '@stepfold/engine';
import { TERMINAL_STATUSES } from '@stepfold/engine';
import type { Collection, Filter } from 'mongodb';
import { claimRounds } from './claim-rounds.js';
import type { InstanceDocument } from './encode.js';

// An empty inbox is `{}` once its last signal is consumed, or missing on a document never sent to
// (null matches missing).
const HAS_SIGNALS = { sent: { $nin: [{}, null] } } as Filter<InstanceDocument>;
const NO_SIGNALS = { sent: { $in: [{}, null] } } as Filter<InstanceDocument>;
const TERMINAL = [...TERMINAL_STATUSES];

/** The document path of the waiting signal `seq`: a key, not an array element (see the README). */
export const sentPath = (seq: number): string => `sent.k${seq}`;

/** The `$unset` that removes the signals `seqs` from the inbox. */
export function unsetSent(seqs: readonly number[]): Record<string, ''> {
  return Object.fromEntries(seqs.map((seq) => [sentPath(seq), '']));
}

/**
 * What a save matching a notice also requires: the stored snapshot exactly `match.json`, and each
 * consumed signal's stored event exactly its text (no digest: MongoDB compares the strings).
 */
export function matchFilter(c: UpdateCondition): Filter<InstanceDocument> {
  const { match } = c;
  if (!match) return {};
  const events = (c.consumed ?? []).map((seq, i) => ({ [`${sentPath(seq)}.e`]: match.sent[i] }));
  return { snapshot: match.json, ...(events.length ? { $and: events } : {}) };
}

const rowOf = (d: InstanceDocument): SentRow => ({
  json: d.snapshot,
  // Field order is append order: the signals oldest first.
  sent: Object.entries(d.sent ?? {}).map(([key, w]) => ({
    seq: Number(key.slice(1)),
    // Left as text for the store kit to parse: a corrupt one fails its own row, not the claim.
    event: typeof w?.e === 'string' ? w.e : '',
  })),
});

/**
 * The inbox inside each instance document: `sent.k<seq>: { e, d }` appended by one conditional
 * `updateOne`, removed by `$unset` in the save that applies them; `sentDueAt` is the earliest time
 * the inbox's own claim may take the instance (kept right lazily, see `claim`).
 */
export function mongoInbox(docs: Collection<InstanceDocument>): InboxDriver {
  return {
    async append(id, entry, accept) {
      // Random, not counted: an update without pipelines cannot read a counter into the key it
      // writes. A clash (one in 2^48 per waiting signal) refuses the send, which then takes the
      // signal's direct path.
      const path = sentPath(randomInt(1, 2 ** 48));
      const definitions = accept.filter((a) => typeof a === 'string');
      const r = await docs.updateOne(
        { _id: id, status: { $nin: TERMINAL }, definition: { $in: definitions }, [path]: { $exists: false } },
        { $set: { [path]: { e: entry.json, d: entry.dueAt } }, $min: { sentDueAt: entry.dueAt } },
      );
      return r.matchedCount === 1;
    },
    async claim(w) {
      // A claim moves sentDueAt to its end; a later signal's $min brings it back. A save cannot
      // recompute it (no pipelines), so an instance whose signals were all applied stays in range
      // until a claim finds it empty and unsets it.
      const won = await claimRounds(docs, {
        due: { sentDueAt: { $lte: w.now } },
        key: 'sentDueAt',
        limit: w.limit,
        set: { sentDueAt: w.until },
        nonce: 'sentClaim',
        ready: { filter: HAS_SIGNALS, idle: NO_SIGNALS, unset: { sentDueAt: '', sentClaim: '' } },
        read: { snapshot: 1, sent: 1 },
      });
      return won.map(rowOf);
    },
    async claimIds(ids) {
      const found = await docs
        .find({ _id: { $in: [...ids] }, ...HAS_SIGNALS }, { projection: { snapshot: 1, sent: 1 } })
        .toArray();
      const byId = new Map(found.map((d) => [d._id, d]));
      return ids.flatMap((id) => {
        const d = byId.get(id);
        return d ? [rowOf(d)] : [];
      });
    },
    async drop(id, seqs, version) {
      await docs.updateOne({ _id: id, version }, { $unset: unsetSent(seqs) });
    },
  };
}
