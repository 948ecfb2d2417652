import type { WorkflowEvent } from '../events.js';
import type { FinishedStatus, Snapshot, Status } from '../snapshot.js';
import type { CreateFlow, FlowStore, SaveFlow } from './flow.js';
import type { ListOrder, WhereCondition } from './list-query.js';
import type { StreamStore } from './stream.js';

/**
 * Filter and page for {@link Store.list}. Results are ordered by id unless `orderBy` names a search
 * attribute; pass back `cursor` for the next page (with the same filter and order).
 */
export interface ListQuery {
  status?: Status | undefined;
  workflow?: string | undefined;
  limit: number;
  cursor?: string | null | undefined;
  /**
   * Conditions on search attributes (`Snapshot.search`) and the built-ins `status` and `workflow`,
   * all of which must hold: a value (equality) or `{ eq, gt, gte, lt, lte, in }`. Ranges match only
   * values of the condition's kind (a number range never matches a string); an instance without
   * the attribute matches no condition on it. The built-ins take equality and `in`. Executed by
   * the store's indexes where it has them (see each store's README).
   */
  where?: Readonly<Record<string, WhereCondition>> | undefined;
  /**
   * `id` (the default) or a search attribute, ascending unless `desc`: by an attribute, only
   * instances that have it are listed, booleans before numbers before strings, ties by id.
   */
  orderBy?: ListOrder | undefined;
}

/** Narrows {@link Store.listDue} and {@link DueClaims.claimDue}. */
export interface DueQuery {
  /** Only instances of this workflow name. */
  workflow?: string | undefined;
  /**
   * On a store with {@link Store.claims}: how long the ids this call returns stay claimed, in ms
   * against its `now` (a non-negative integer; default the store's `claimMs`). A claim is a lease
   * over what the caller does next, so its length is the caller's to choose: a worker claims for a
   * tick (seconds), not for a handler run (the task's deadline guards that).
   */
  leaseMs?: number | undefined;
  /**
   * Whose claim this is: {@link DueClaims.release} with the same token gives it back, and only it.
   * Default: the store object's own token (one per `createXStore` call).
   */
  token?: string | undefined;
}

/** Narrows {@link DueClaims.claimDue}: a lane, and/or only the instances named (by a wake notice, say). */
export interface ClaimQuery extends DueQuery {
  /** Only these instances (each still only if due and unclaimed). */
  ids?: readonly string[] | undefined;
  /** {@link Unreadable}: a claimed row that cannot be read is reported here and left out, instead of failing the whole claim. */
  onUnreadable?: Unreadable | undefined;
}

/**
 * Receives the error (INVALID_SNAPSHOT) of a claimed row whose stored snapshot cannot be read (torn,
 * hand-edited, from an unknown format). The row is left out of the answer and stays claimed until
 * its lease lapses, so one bad row neither fails the batch nor fills every poll; without this
 * callback the claim throws the error, as every other read does.
 */
export type Unreadable = (error: unknown) => void;

/** Options of {@link Store.save}: what the conditional write also does or also requires. */
export interface SaveOptions {
  /**
   * The sent signals ({@link Inbox.claim}) this write applied: removed from the inbox in the same
   * conditional write (a wrapper around a store must pass them on, or they are applied again).
   */
  consumed?: readonly SentSignal[] | undefined;
  /**
   * The snapshot the caller believes is stored, taken from an untrusted source (a wake notice's
   * hand-off): the write also requires the stored instance to be exactly this one, and each of
   * `consumed` to be stored as given (compared by digest), else it fails with `NOTICE_MISMATCH` and
   * writes nothing.
   */
  matches?: Snapshot | undefined;
  /**
   * Flow holders acquired and released in the same write, on a store whose `flow.inSave` is true
   * (else the save throws): see {@link SaveFlow}. Not with `consumed` or `matches`.
   */
  flow?: SaveFlow | undefined;
}

/** Options of {@link Store.create}: what the create also does. */
export interface CreateOptions {
  /**
   * A flow holder acquired in the same write, on a store whose `flow.inCreate` is true (else the
   * create throws): see {@link CreateFlow}. A wrapper around a store must pass it on (its
   * `taken` told), or the caller acquires the holder again after the create.
   */
  flow?: CreateFlow | undefined;
}

/** Options of {@link Store.delete}. */
export interface DeleteOptions {
  /** Remove the instance only if this is its stored version (`VERSION_CONFLICT` otherwise). */
  version?: number | undefined;
}

/**
 * What a wake notice says: an instance of `workflow` is due at `at` (epoch ms, maybe already past);
 * `id` names it where the store's notices carry it.
 */
export interface WakeNotice {
  at: number;
  workflow?: string | undefined;
  id?: string | undefined;
  /**
   * The instance as the write that sent the notice left it, when that write handed a task to any
   * worker and the store can carry it: a worker may take the task from it with no claim and no
   * load: the write that takes it is conditional on the stored instance being exactly this one
   * ({@link SaveOptions.matches}), so one worker wins and a forged notice changes nothing. Untrusted:
   * checked like a load.
   */
  snapshot?: Snapshot | undefined;
  /**
   * An {@link Inbox.send} notice: the signals sent to the instance not yet applied, oldest first,
   * with `snapshot`; without it, empty (claim them by id with {@link Inbox.claim}).
   */
  sent?: SentSignal[] | undefined;
  /**
   * A timer announced while a task of the instance runs (its runner will write again soon): a
   * worker that did not write it should not claim the instance ahead of the time on a snapshot
   * that may go stale by then (see `isBusyNotice`).
   */
  busy?: boolean | undefined;
}

/**
 * A signal {@link Inbox.send} appended to an instance's inbox that no write has applied yet. `seq`
 * is the store's number for it, unique among the instance's waiting signals (a store may number
 * them in send order, but need not: every list of them is oldest first); `event` is the signal
 * event as sent, untrusted JSON until the reducer checks it.
 */
export interface SentSignal {
  seq: number;
  event: WorkflowEvent;
}

/** An instance with sent signals waiting, as {@link Inbox.claim} returns it. */
export interface SentDue {
  snapshot: Snapshot;
  sent: SentSignal[];
}

/** Receives the notices of a {@link WakeSource} subscription. */
export interface WakeListener {
  /** An instance is due at `hint.at`: poll then (now, if it is past). */
  wake(hint: WakeNotice): void;
  /** The subscription broke; the source reconnects with backoff by itself. Notices may be missed until `restored`. */
  lost?(error: unknown): void;
  /** The subscription works again after a loss (poll once: notices sent meanwhile are gone). */
  restored?(): void;
}

/** A live subscription; `close` ends it and releases its connection. */
export interface WakeSubscription {
  close(): Promise<void>;
}

/**
 * A store's push channel for due instances. A write sends a notice when the instance's new `wakeAt`
 * is a timer or a handed-off task (see {@link wakeNotice}); a running task's deadline sends none,
 * since only a crashed worker leaves it to expire and polling finds those.
 */
export interface WakeSource {
  /** Starts delivering notices to `listener`; resolves once the subscription is live. */
  subscribe(listener: WakeListener): Promise<WakeSubscription>;
}

/** One page of {@link Store.list}; `cursor` is null on the last page. */
export interface ListPage {
  items: Snapshot[];
  cursor: string | null;
}

/**
 * Claims on due instances: while an instance is claimed (until the lease lapses, the instance is
 * saved, or the claimer releases it), `listDue` and `claimDue` do not return it to anyone else, so
 * workers polling one store get disjoint batches. Every `listDue` of a store with claims claims.
 */
export interface DueClaims {
  /**
   * {@link Store.listDue} and {@link Store.load} in one round trip: claims due instances as listDue
   * does and returns their stored snapshots in its due order (with `ids`, only those).
   */
  claimDue(now: number, limit: number, query?: ClaimQuery): Promise<Snapshot[]>;
  /** Gives back the claims on `ids` taken with `token` (default the store's own); another caller's claims stay. */
  release(ids: readonly string[], token?: string): Promise<void>;
}

/**
 * What {@link Inbox.send} did: `true`, appended; a finished status, nothing written because the
 * instance has finished that way; `false`, nothing written for another reason (or an unsaid one).
 * Compare with `=== true`: a finished status is a truthy string.
 */
export type InboxSendOutcome = boolean | FinishedStatus;

/**
 * The inbox behind `runner.send`: a signal appended in one write, for a worker to apply. A save
 * with {@link SaveOptions.consumed} removes what it applied in the same conditional write.
 */
export interface Inbox {
  /**
   * Appends a signal to the instance's inbox in one write if the instance exists, is not finished,
   * and was started on a definition `accept` lists (`name@version@hash`), and resolves true. A store
   * with wakes announces it (the notice carries `sent`, and the snapshot where it fits). Otherwise
   * nothing is written and it resolves with the instance's status when the write saw it finished
   * on an accepted definition, else false (missing, another definition, no room, or a store whose
   * write cannot tell): the runner then takes the signal's own path, which reads the instance.
   */
  send(id: string, event: WorkflowEvent, accept: readonly string[]): Promise<InboxSendOutcome>;
  /**
   * Instances with sent signals waiting, each with its snapshot and every signal waiting for it
   * (oldest first): with `ids`, those instances at once (no claim); else signals sent over
   * {@link SENT_CLAIM_AFTER_MS} ago (their notice was missed or lost its race) that no other call
   * claimed in the last `claimMs`, claiming them.
   */
  claim(now: number, limit: number, ids?: readonly string[], onUnreadable?: Unreadable): Promise<SentDue[]>;
  /** Removes sent signals that applied to nothing (a finished instance, a duplicate id), if the instance is still at `version`. */
  drop(id: string, seqs: readonly number[], version: number): Promise<void>;
}

/**
 * How long a sent signal is left to its wake notice before {@link Inbox.claim}'s polls may claim
 * it: the notice normally has it applied within milliseconds.
 */
export const SENT_CLAIM_AFTER_MS = 1_000;

/**
 * Persistence contract every store implements: a small core plus capability objects. Writes are
 * conditional on the version, so concurrent runners never overwrite each other. Adapters build it
 * with `defineStore` from narrow database calls.
 */
export interface Store {
  /** Largest serialized snapshot (UTF-8 bytes of its JSON) this store accepts. */
  readonly maxSnapshotBytes: number;
  /** Creates tables, indexes or scripts; safe to run any number of times. */
  setup(): Promise<void>;
  /** Inserts a new instance; `AlreadyExistsError` if the id is taken (see {@link CreateOptions}). */
  create(snapshot: Snapshot, options?: CreateOptions): Promise<void>;
  /** The stored snapshot, or null when the id does not exist. */
  load(id: string): Promise<Snapshot | null>;
  /**
   * Replaces the instance only if its stored version equals `expectedVersion`
   * (`VersionConflictError` otherwise, `NotFoundError` if it is gone; see {@link SaveOptions}).
   */
  save(snapshot: Snapshot, expectedVersion: number, options?: SaveOptions): Promise<void>;
  /**
   * Ids of instances with `wakeAt <= now`, at most `limit`, in the due order; index-served. The due
   * order is round-robin across fairness keys ({@link Snapshot.fairKey}), so that every group's
   * first due instance is among the first (number of groups) of the order, however many of another
   * key are due ahead of it:
   *
   * 1. The candidates are the instances due at `now` (with claims, not claimed), narrowed by the
   *    query (`workflow`; `ids` for a claim).
   * 2. They fall into groups by `fairKey`; instances without one (or with `''`) form one group of
   *    their own, the key `''`. Each group is ordered by due time (`wakeAt`; a store that moves a
   *    claimed instance to its claim's expiry uses that once the claim lapsed; an instance due at
   *    once when written counts {@link Snapshot.priority} seconds earlier, as the store kit indexes
   *    it), then id; the first is the group's head.
   * 3. The order takes the first of every group, then the second of every group that has one, and
   *    so on; within such a round, groups by their turn, then key (`''` first). A group's turn is
   *    the later of its head's due time and when the store last handed out one of its instances
   *    (the `now` of that call; a store keeps this only while more than one group is due), so the
   *    rotation goes on across calls: a call of limit 1 takes each key's next in turn, not the
   *    oldest backlog's again. `limit` cuts the order.
   *
   * With one group (no instance has a key) that is earliest `wakeAt` first, ties by id. With key A
   * 1,000 due and key B 1 due after them, B's instance is second; and of two calls of limit 1
   * made once B's is due, one takes it.
   *
   * A wake time that is only a running task's deadline (or lease end) may be indexed up to a second
   * later (the store kit's `DEADLINE_INDEX_MS`), so a lost task is found at most that much late.
   * `query.workflow` keeps one workflow's instances only (a worker's per-workflow lane). A store
   * with {@link Store.claims} claims the ids it returns.
   */
  listDue(now: number, limit: number, query?: DueQuery): Promise<string[]>;
  /** Instances matching the filter and `where`, ordered by id or `orderBy`, paged by cursor. */
  list(query: ListQuery): Promise<ListPage>;
  /**
   * Removes the instance (and its inbox); true if it existed, false if the id does not exist. With
   * `options.version`, in one conditional operation: only if the stored version is that one, else
   * `VersionConflictError` and nothing removed (a missing id is still false, not an error). A store
   * with {@link Store.flow} releases the slots the instance held (`Snapshot.holds`, its running
   * attempts' slots, its waits) once it is gone; the instances that waited for them are due by
   * their own wake times.
   */
  delete(id: string, options?: DeleteOptions): Promise<boolean>;
  /** Releases what the adapter opened itself (never the caller's client). */
  close(): Promise<void>;
  /** Claims on due instances (see {@link DueClaims}); absent: `listDue` claims nothing. */
  readonly claims?: DueClaims | undefined;
  /** The inbox behind `runner.send` (see {@link Inbox}); absent: `send` applies the signal itself. */
  readonly inbox?: Inbox | undefined;
  /** Push notices that an instance fell due, where the database can send them; polling stays the source of truth. */
  readonly wakes?: WakeSource | undefined;
  /** Concurrency slots and rate windows per key, counted for every runner sharing the store (see {@link FlowStore}). */
  readonly flow?: FlowStore | undefined;
  /** Chunks step attempts stream to readers, outside the snapshot (see {@link StreamStore}). */
  readonly stream?: StreamStore | undefined;
}

/** UTF-8 size of the snapshot's JSON, the measure every store's size limit uses. */
export function snapshotBytes(json: string): number {
  let bytes = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}
