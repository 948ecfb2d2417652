import type { InboxSendOutcome, SentSignal, WakeSource } from './store.js';
import type { EncodedSnapshot, ListArgs, SizeLimits } from './store-kit.js';

// The narrow calls an adapter writes: each one database round trip, its arguments already checked
// and encoded by `defineStore`, which turns them into a `Store`.

/** A due query as a driver gets it: a positive page size, the lane, and the claim's window and owner. */
export interface DueWindow {
  /** The caller's `now` (epoch ms, any number). */
  now: number;
  /** When a claim taken now lapses: `now` plus the lease (the call's `leaseMs`, else the store's `claimMs`). */
  until: number;
  /** At most this many (a positive integer). */
  limit: number;
  /** Only this workflow's instances (a valid id), or every workflow. */
  workflow?: string | undefined;
  /** Whose claim it is: written with the claim, so `release` gives back only its owner's. */
  token: string;
}

/** A {@link DueWindow} narrowed to named instances (valid ids, at least one). */
export interface ClaimWindow extends DueWindow {
  ids?: readonly string[] | undefined;
}

/** What a conditional update requires and also does. */
export interface UpdateCondition {
  /** The stored version must be this. */
  expected: number;
  /** Inbox seqs to remove in the same write (safe integers, at least one; oldest first). */
  consumed?: readonly number[] | undefined;
  /**
   * The stored snapshot must be exactly `json` and each consumed signal's stored event exactly the
   * `sent` entry at its place (the order of `consumed`, oldest first). Compare `digest` (the driver's declared algorithm over
   * the UTF-8 bytes of `json` followed by `"\n" + event` for each, lowercase hex) or, without an
   * algorithm, the texts themselves.
   */
  match?: { json: string; sent: readonly string[]; digest: string } | undefined;
}

/** A conditional update's result: written, failed (the engine looks up why), or why, when the write already knows. */
export type DriverOutcome = 'written' | 'failed' | 'missing' | { stored: number };

/** A row of the inbox's claim: the instance's JSON and every signal waiting for it, oldest first. */
export interface SentRow {
  json: string;
  /**
   * Each signal's seq and event: the event's stored JSON text, which `defineStore` parses (so a
   * corrupt one fails its own row, not the claim), or the event itself.
   */
  sent: Array<SentSignal | { seq: number; event: string }>;
}

/** A signal to append, encoded: its JSON, its time, and when the inbox's own polls may claim it. */
export interface SentEntry {
  json: string;
  at: number;
  dueAt: number;
}

/** The inbox's database calls (see `Inbox`). */
export interface InboxDriver {
  /**
   * Appends `entry` if the instance exists, is not finished and runs a definition `accept` lists:
   * true. Else writes nothing: the finished status where the write saw one on an accepted
   * definition (no read added to learn it), false otherwise.
   */
  append(id: string, entry: SentEntry, accept: readonly string[]): Promise<InboxSendOutcome>;
  /** Instances with signals due by `window.now` and unclaimed, claiming them until `window.until`. */
  claim(window: Omit<DueWindow, 'workflow'>): Promise<SentRow[]>;
  /** The named instances that have signals waiting, with no claim. */
  claimIds(ids: readonly string[]): Promise<SentRow[]>;
  /** Removes `seqs` of the instance if it is still at `version`. */
  drop(id: string, seqs: readonly number[], version: number): Promise<void>;
}

/** The claims' database calls (see `DueClaims`). */
export interface ClaimsDriver {
  /** `due`, returning the claimed rows' JSON, earliest wake time first. */
  claim(window: ClaimWindow): Promise<string[]>;
  /** Ends the claims on `ids` written with `token`. */
  release(ids: readonly string[], token: string): Promise<void>;
}

/** An adapter's database calls, for {@link defineStore}. */
export interface StoreDriver {
  setup(): Promise<void>;
  /** Inserts the row; false when the id is taken. */
  insert(row: EncodedSnapshot): Promise<boolean>;
  /** The stored JSON, or null. */
  select(id: string): Promise<string | null>;
  /** Writes the row if `condition` holds (ending any claim on it). */
  update(row: EncodedSnapshot, condition: UpdateCondition): Promise<DriverOutcome>;
  /** The stored version, or null when the id does not exist (after a failed update). */
  version(id: string): Promise<number | null>;
  /** Ids due by `window.now`, earliest first; a driver with `claims` claims them. */
  due(window: DueWindow): Promise<string[]>;
  /** Up to `args.limit + 1` rows in id order after `args.cursor` (the extra row says another page exists). */
  page(args: ListArgs): Promise<ReadonlyArray<{ id: string; json: string }>>;
  /**
   * Removes the instance and its inbox; true if it was removed. With `version`, in one conditional
   * operation, only if that is the stored version (false otherwise: the engine looks up why).
   */
  remove(id: string, version?: number): Promise<boolean>;
  /** Releases what the adapter opened itself. */
  close?(): Promise<void>;
  claims?: ClaimsDriver | undefined;
  inbox?: InboxDriver | undefined;
  wakes?: WakeSource | undefined;
}

/** What {@link defineStore} needs besides the driver. */
export interface StoreDefinition {
  /** Names the store in errors (`postgres save failed: …`). */
  name: string;
  /** Whether a driver error means the server cannot be reached (it becomes `STORE_UNAVAILABLE`). */
  isUnavailable(error: unknown): boolean;
  sizes: SizeLimits;
  /** The user's `claimMs` option: the default lease of a claim (a non-negative integer, default 30 000). */
  claimMs?: number | undefined;
  /**
   * The digest the driver compares {@link UpdateCondition.match} by (lowercase hex of the UTF-8
   * bytes, e.g. `(text) => textDigest(text, 'SHA-256')`); absent, the driver compares the texts.
   */
  digest?: ((text: string) => Promise<string>) | undefined;
}
