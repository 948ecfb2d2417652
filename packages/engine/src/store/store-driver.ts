import type { FlowCounterRef } from '../flow-need.js';
import type { CreateFlow, FlowGrant, FlowKeyState, FlowNeed, SaveFlow } from './flow.js';
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
  /**
   * Flow holders to take and release in the same write (only on a driver whose `flow.inUpdate` is
   * true, never with `consumed` or `match`), checked as `flow.acquire`'s and `flow.release`'s
   * arguments. Written only when the condition holds and the take's needs are met: the release
   * first, then the take, as `flow.release` and `flow.acquire` do them; answers `{ woken }`, the
   * instances `flow.release` would answer. A need not met writes nothing, not even a waiter entry,
   * and answers `'refused'`. Its `counters` name where the released holders are, as
   * `flow.release`'s do (absent: unknown).
   */
  flow?: Omit<SaveFlow, 'woken'> | undefined;
}

/**
 * A holder to take with an insert, checked as `flow.acquire`'s arguments (at least one need): taken
 * as `flow.acquire` takes it at `now` when the row is inserted; nothing when the id is taken.
 */
export type InsertFlow = Omit<CreateFlow, 'taken'>;

/**
 * A conditional update's result: written (with `flow`: and the instances its release woke),
 * failed (the engine looks up why), refused (its `flow` take was not granted; nothing written), or
 * why, when the write already knows.
 */
export type DriverOutcome =
  | 'written'
  | { woken: string[] }
  | 'failed'
  | 'refused'
  | 'missing'
  | { stored: number };

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
  /** `due`, returning the claimed rows' JSON in the same order. */
  claim(window: ClaimWindow): Promise<string[]>;
  /** Ends the claims on `ids` written with `token`. */
  release(ids: readonly string[], token: string): Promise<void>;
}

export type { FlowCounterRef } from '../flow-need.js';

/** A flow listing as a driver gets it: checked, the cursor decoded. */
export interface FlowListArgs {
  /** Only counters of this scope. */
  scope?: string | undefined;
  /** At most this many counters (a positive integer); the driver returns up to `limit + 1` (the extra one says another page exists). */
  limit: number;
  /** Only counters after this one in (scope, key, period) order; null from the first. */
  after: FlowCounterRef | null;
  /** Leases and windows are judged at this time (a safe integer). */
  now: number;
}

/**
 * The flow capability's database calls (see `FlowStore`), every argument checked by `defineStore`:
 * holders are non-empty printable ASCII, instances valid ids, needs well formed and at least one,
 * with no counter twice, and every time a safe integer. A counter is (scope, key, period): see
 * {@link FlowCounterRef}. Each call is atomic over every counter it touches.
 *
 * - Concurrency counters keep holders with a lease (`until`); a hold counts while `until > now`.
 * - Rate counters keep the starts `{ holder, at }` of the last two periods: a start counts while
 *   `at + periodMs > now` (its window), and the driver may drop it once `at + 2 * periodMs <= now`
 *   and keep at most the `2 * limit` latest, never fewer: a caller whose `now` lags a later
 *   caller's (it read its clock first, its call landed second) must still count every start of its
 *   own window.
 * - Either keeps its waiters `{ holder, instance, since }`, each holder once, and the `limit` and
 *   `periodMs` of the last need that named it (what `list` reports).
 */
export interface FlowDriver {
  /** True when the driver's `update` takes `UpdateCondition.flow` (see there). */
  inUpdate?: boolean | undefined;
  /** True when the driver's `insert` takes an {@link InsertFlow} (see there). */
  inInsert?: boolean | undefined;
  /**
   * All of `needs` for `holder`, or nothing. A need is met when the holder already holds the
   * counter (an unlapsed hold, or a start in the window: granted again without another start), or
   * when the counter has room: fewer than `need.limit` other unlapsed holders, or fewer than
   * `need.limit` starts in the window. Every need met: the holds are set (or moved) to `until`,
   * missing starts recorded at `now`, lapsed holds of those counters dropped, and `holder`'s waiter
   * entries on them removed. Else nothing is written but `holder`'s waiter entry on the first unmet
   * need's counter (added with `since: now`, or kept as it is), and the answer names that need:
   * `until` is the earliest lease of its holders to lapse, or for a rate, the start that must leave
   * the window for one more (the oldest when the window is full) plus `periodMs`; `count` is what
   * the counter held at `now` besides `holder`.
   */
  acquire(
    holder: string,
    instance: string,
    needs: readonly FlowNeed[],
    now: number,
    until: number,
  ): Promise<FlowGrant>;
  /**
   * Ends `holders`' holds (not their starts: a start stays for two periods) and removes their waiter
   * entries. For each concurrency counter that lost holds, its oldest waiters (by `since`, then
   * holder) up to the number of holds it lost, and no more than its free slots at `now`: their
   * instances, oldest first, each once. A counter left with nothing (no hold, no start of the last
   * two periods, no waiter) may be deleted. `counters` (checked, each once), when given, names every
   * counter the holders hold or wait on: the driver may look only there (a driver that finds a
   * holder's counters cheaply, by an index of its own, may ignore it); absent, it looks everywhere.
   */
  release(holders: readonly string[], now: number, counters?: readonly FlowCounterRef[]): Promise<string[]>;
  /**
   * Sets the lease of every hold of `holders` to `until`; starts and waiters are left as they are.
   * `counters`: where they hold, as `release` takes them.
   */
  renew(holders: readonly string[], until: number, counters?: readonly FlowCounterRef[]): Promise<void>;
  /**
   * Counters of `args.scope` (or all) after `args.after` in (scope, key, period) order with an
   * unlapsed hold, a start in the window or a waiter at `args.now`: up to `args.limit + 1`, each
   * with those holds (a start as `{ holder, until: at + periodMs }`) and its waiters, oldest first.
   */
  list(args: FlowListArgs): Promise<FlowKeyState[]>;
}

/** A stream entry as a driver stores it: `data` is the chunk's JSON text, null for a reset entry. */
export interface StoredStreamEntry {
  offset: number;
  step: string;
  attempt: number;
  data: string | null;
}

/** What a stream driver read: stored entries, and the newest attempt begun of each step. */
export interface StoredStreamPage {
  /** Entries at offsets `from`, `from + 1`, … in order (fewer than asked only at the end of what the read saw). */
  entries: StoredStreamEntry[];
  /**
   * The newest attempt begun of each step of the instance (at least of the steps in `entries`), as
   * of the read or later: chunks of an older attempt are superseded, and `defineStore` skips them.
   */
  fences: Record<string, number>;
}

/**
 * The stream capability's database calls (see `StreamStore`), every argument checked by
 * `defineStore`: valid instance ids, steps of 1-512 characters without NUL or lone surrogates,
 * attempts positive safe integers, chunks JSON texts within the size limits. A stream is the
 * instance's entries at offsets 0, 1, 2, … without holes, and a fence per step (the newest attempt
 * that began).
 */
export interface StreamDriver {
  /**
   * In one atomic write: if the step's fence (0 when it has none) is above `attempt`, nothing is
   * written and the answer is `{ fenced }` with the fence. Else, when `attempt` is above both the
   * fence and 1 (an older attempt may have streamed), a reset entry (`data` null) of `attempt` is
   * appended; the fence becomes `attempt`; then `chunks`, at the next offsets. Resolves with the
   * offset after the stream's last entry. An attempt 1 of a step with no fence and no chunks needs
   * no write (no attempt can be older).
   */
  append(
    instance: string,
    step: string,
    attempt: number,
    chunks: readonly string[],
  ): Promise<number | { fenced: number }>;
  /** Up to `limit` entries from offset `from` on (see {@link StoredStreamPage}). */
  read(instance: string, from: number, limit: number): Promise<StoredStreamPage>;
  /** Deletes the instance's entries and fences. */
  remove(instance: string): Promise<void>;
  /**
   * Where the database can announce appends: resolves once the stream may hold an entry at offset
   * `next` or later (at once if it does), or after `ms`, or when `signal` aborts. Absent: readers
   * that caught up poll. A database whose wait returns the new entries (Redis's XREAD) may resolve
   * with them, from `next` on in offset order (superseded chunks included): a tail yields them
   * without reading again.
   */
  wait?(
    instance: string,
    next: number,
    ms: number,
    signal?: AbortSignal,
  ): Promise<void> | Promise<readonly StoredStreamEntry[] | undefined>;
}

/** An adapter's database calls, for {@link defineStore}. */
export interface StoreDriver {
  setup(): Promise<void>;
  /**
   * Inserts the row; false when the id is taken. With `flow` (only on a driver whose
   * `flow.inInsert` is true): the row only with the take, all or nothing; `'refused'` when a need
   * is not met (nothing written, not even a waiter entry; the id may be taken as well).
   */
  insert(row: EncodedSnapshot, flow?: InsertFlow): Promise<boolean | 'refused'>;
  /** The stored JSON, or null. */
  select(id: string): Promise<string | null>;
  /** Writes the row if `condition` holds (ending any claim on it). */
  update(row: EncodedSnapshot, condition: UpdateCondition): Promise<DriverOutcome>;
  /** The stored version, or null when the id does not exist (after a failed update). */
  version(id: string): Promise<number | null>;
  /**
   * Ids due by `window.now` in the due order of `Store.listDue` (round-robin across the rows'
   * `fairKey`, earliest due first within each); a driver with `claims` claims them.
   */
  due(window: DueWindow): Promise<string[]>;
  /**
   * Up to `args.limit + 1` rows in id order after `args.cursor` (the extra row says another page
   * exists). A driver that declares {@link StoreDriver.searches} also applies `args.search` (its
   * filters, order and `after`); without it, `args.search` is never passed.
   */
  page(args: ListArgs): Promise<ReadonlyArray<{ id: string; json: string }>>;
  /**
   * The driver indexes `EncodedSnapshot.search` and its `page` applies `ListArgs.search` on the
   * server. Absent: `defineStore` answers a search by reading every page the plain filters match.
   */
  searches?: boolean | undefined;
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
  flow?: FlowDriver | undefined;
  stream?: StreamDriver | undefined;
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
