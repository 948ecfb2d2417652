import type { EncodedSnapshot } from '@stepfold/engine';
import { searchEntry } from './search-filter.js';

/** A signal waiting in an instance's inbox: its event JSON and when the inbox's own claim may take it. */
export interface WaitingSignal {
  e: string;
  d: number;
}

/** Shape of one stored instance; the snapshot itself is kept as its JSON text. */
export interface InstanceDocument {
  _id: string;
  version: number;
  status: string;
  workflow: string;
  /** `name@version@hash` of the definition it runs: what a send's `accept` lists. Missing on documents of versions before the inbox until their next save. */
  definition?: string | undefined;
  wakeAt: number | null;
  /**
   * Where the instance sits in the due order: `wakeAt`, or a claim's expiry while a claim holds, so
   * claimed documents leave the head of the due index. Missing on documents written before it
   * existed until `setup` fills it in.
   */
  dueAt?: number | null | undefined;
  snapshot: string;
  /** The search attributes, one encoded string each (see `searchEntry`; empty for none, missing on documents written before them). */
  sa?: string[] | undefined;
  /** While a claim holds: its expiry (epoch ms, against the claiming call's `now`). A save unsets it. */
  claimedUntil?: number | null | undefined;
  /** Whose claim it is (the claim's token): `release` with it ends the claim. */
  claimToken?: string | undefined;
  /** Which call took the claim (a random UUID): how that call tells the documents it won. */
  claimCall?: string | undefined;
  /** The inbox: signals sent and not yet applied, keyed `k<seq>`, oldest first (field order is append order). */
  sent?: Record<string, WaitingSignal> | undefined;
  /** When the inbox's own claim may take the instance: the earliest signal's due time, or a claim's expiry. */
  sentDueAt?: number | undefined;
  /** Which inbox claim call took it last (a random UUID). */
  sentClaim?: string | undefined;
}

/** The fields a create or save owns (never the inbox's). */
export function toDocument(e: EncodedSnapshot): InstanceDocument {
  return {
    _id: e.id,
    version: e.version,
    status: e.status,
    workflow: e.workflow,
    definition: e.definition,
    wakeAt: e.wakeAt,
    // A create or save puts the instance back at its wake time, ending any claim's move.
    dueAt: e.wakeAt,
    snapshot: e.json,
    // Always set (empty for none), so a save that clears every attribute clears the entries.
    sa: e.search ? Object.entries(e.search).map(([n, v]) => searchEntry(n, v)) : [],
  };
}
