import type { EncodedSnapshot } from '@stepfold/engine/store-kit';

/** Shape of one stored instance; the snapshot itself is kept as its JSON text. */
export interface InstanceDocument {
  _id: string;
  version: number;
  status: string;
  workflow: string;
  wakeAt: number | null;
  /**
   * Where the instance sits in the due order: `wakeAt`, or a claim's expiry while a claim holds, so
   * claimed documents leave the head of the due index. Missing on documents written before it
   * existed until `setup` fills it in.
   */
  dueAt?: number | null | undefined;
  snapshot: string;
  /** While a claim holds: its expiry (epoch ms, against the claiming call's `now`). A save unsets it. */
  claimedUntil?: number | null | undefined;
  /** Whose claim it is (the claim's token): `release` with it ends the claim. */
  claimToken?: string | undefined;
  /** Which call took the claim (a random UUID): how that call tells the documents it won. */
  claimCall?: string | undefined;
}

/** The document of an encoded snapshot: the fields a create or save owns. */
export function toDocument(e: EncodedSnapshot): InstanceDocument {
  return {
    _id: e.id,
    version: e.version,
    status: e.status,
    workflow: e.workflow,
    wakeAt: e.wakeAt,
    // A create or save puts the instance back at its wake time, ending any claim's move.
    dueAt: e.wakeAt,
    snapshot: e.json,
  };
}
