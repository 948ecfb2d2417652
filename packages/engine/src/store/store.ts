import type { WorkflowEvent } from '../events.js';
import type { Snapshot, Status } from '../snapshot.js';

/** Filter and page for {@link Store.list}. Results are ordered by id; pass back `cursor` for the next page. */
export interface ListQuery {
  status?: Status | undefined;
  workflow?: string | undefined;
  limit: number;
  cursor?: string | null | undefined;
}

/** Narrows {@link Store.listDue}. */
export interface DueQuery {
  /** Only instances of this workflow name. */
  workflow?: string | undefined;
  /**
   * On a store that claims ({@link Store.claimsDue}): how long the ids this call returns stay
   * claimed, in ms against its `now` (a non-negative integer; default the store's `claimMs`). A
   * claim is a lease over what the caller does next, so its length is the caller's to choose: a
   * worker claims for a tick (seconds), not for a handler run (the task's deadline guards that).
   */
  leaseMs?: number | undefined;
}

/** Narrows {@link Store.claimDue}: a lane, and/or only the instances named (by a wake notice, say). */
export interface ClaimQuery extends DueQuery {
  /** Only these instances (each still only if due and unclaimed). */
  ids?: readonly string[] | undefined;
}

/**
 * What a wake notice says: an instance of `workflow` is due at `at` (epoch ms, maybe already past);
 * `id` names it where the store's notices carry it.
 */
export interface WakeHint {
  at: number;
  workflow?: string | undefined;
  id?: string | undefined;
  /**
   * The instance as the write that sent the notice left it, when that write handed a task to any
   * worker and the store can carry it: a worker may take the task from it with no claim and no
   * load (the write that takes it is conditional on its version, so one worker wins). Untrusted:
   * checked like a load.
   */
  snapshot?: Snapshot | undefined;
  /**
   * A {@link Store.send} notice: the signals sent to the instance not yet applied, oldest first,
   * with `snapshot`; without it, empty (claim them by id with {@link Store.claimSent}).
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
 * A signal {@link Store.send} appended to an instance's inbox that no write has applied yet. `seq`
 * is the store's number for it (ascending in send order); `event` is the signal event as sent,
 * untrusted JSON until the reducer checks it.
 */
export interface SentSignal {
  seq: number;
  event: WorkflowEvent;
}

/** An instance with sent signals waiting, as {@link Store.claimSent} returns it. */
export interface SentDue {
  snapshot: Snapshot;
  sent: SentSignal[];
}

/** Receives the notices of a {@link WakeSource} subscription. */
export interface WakeListener {
  /** An instance is due at `hint.at`: poll then (now, if it is past). */
  wake(hint: WakeHint): void;
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
 * Persistence contract every adapter implements. Writes are conditional on the version,
 * so concurrent runners never overwrite each other.
 */
export interface Store {
  /** Largest serialized snapshot (UTF-8 bytes of its JSON) this store accepts. */
  readonly maxSnapshotBytes: number;
  /** Creates tables, indexes or scripts; safe to run any number of times. */
  setup(): Promise<void>;
  /** Inserts a new instance; `AlreadyExistsError` if the id is taken. */
  create(snapshot: Snapshot): Promise<void>;
  /** The stored snapshot, or null when the id does not exist. */
  load(id: string): Promise<Snapshot | null>;
  /**
   * Replaces the instance only if its stored version equals `expectedVersion`
   * (`VersionConflictError` otherwise, `NotFoundError` if it is gone).
   */
  save(snapshot: Snapshot, expectedVersion: number, consumed?: readonly number[]): Promise<void>;
  /**
   * Appends a signal to the instance's inbox in one write, for a worker to apply, if the instance
   * exists, is not finished, and was started on a definition `accept` lists
   * (`name@version@hash`); resolves false (writing nothing) otherwise. The write's wake notice
   * carries the snapshot and the waiting signals. With it, a store has {@link Store.claimSent} and
   * {@link Store.dropSent}, and `save` removes the `consumed` seqs in the same conditional write
   * (a wrapper around a store must pass `consumed` on, or sent signals are applied again).
   */
  send?(id: string, event: WorkflowEvent, accept: readonly string[]): Promise<boolean>;
  /**
   * Instances with sent signals waiting, each with its snapshot and every signal waiting for it
   * (oldest first): with `ids`, those instances at once; else signals sent over a second ago
   * (their notice was missed or lost its race) not claimed by another poll, claiming them.
   */
  claimSent?(now: number, limit: number, ids?: readonly string[]): Promise<SentDue[]>;
  /** Removes sent signals that applied to nothing (a finished instance, a duplicate id), if the instance is still at `version`. */
  dropSent?(id: string, seqs: readonly number[], version: number): Promise<void>;
  /**
   * Ids of instances with `wakeAt <= now`, earliest `wakeAt` first, at most `limit`; index-served.
   * A wake time that is only a running task's deadline may be indexed up to a second later (the
   * store kit's `DEADLINE_INDEX_MS`), so a lost task is found at most that much after its deadline.
   * `query.workflow` keeps one workflow's instances only (a worker's per-workflow lane). A store
   * with {@link Store.claimsDue} claims the ids it returns.
   */
  listDue(now: number, limit: number, query?: DueQuery): Promise<string[]>;
  /**
   * True when `listDue` claims what it returns: until the claim lapses (a lease measured against
   * `now`), the instance is saved, or {@link Store.releaseDue} gives it back, a concurrent `listDue`
   * does not return it, so workers polling one store get disjoint batches.
   */
  readonly claimsDue?: boolean | undefined;
  /**
   * {@link Store.listDue} and {@link Store.load} in one round trip: claims due instances as listDue
   * does (a store with it also has {@link Store.claimsDue}) and returns their stored snapshots,
   * earliest `wakeAt` first. A worker uses it when present: a notice's instance is claimed, loaded
   * and ticked in two round trips instead of three.
   */
  claimDue?(now: number, limit: number, query?: ClaimQuery): Promise<Snapshot[]>;
  /** Gives back claims `listDue` took for ids the caller will not tick (a worker shutting down). */
  releaseDue?(ids: readonly string[]): Promise<void>;
  /** Push notices that an instance fell due, where the database can send them; polling stays the source of truth. */
  readonly wakes?: WakeSource | undefined;
  /** Instances matching the filter, ordered by id, paged by cursor. */
  list(query: ListQuery): Promise<ListPage>;
  /** Removes the instance; true if it existed. */
  delete(id: string): Promise<boolean>;
  /** Releases what the adapter opened itself (never the caller's client). */
  close(): Promise<void>;
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
