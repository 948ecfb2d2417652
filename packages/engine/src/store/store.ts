import type { Snapshot, Status } from '../snapshot.js';

/** Filter and page for {@link Store.list}. Results are ordered by id; pass back `cursor` for the next page. */
export interface ListQuery {
  status?: Status;
  workflow?: string;
  limit: number;
  cursor?: string | null;
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
  save(snapshot: Snapshot, expectedVersion: number): Promise<void>;
  /** Ids of instances with `wakeAt <= now`, earliest `wakeAt` first, at most `limit`; index-served. */
  listDue(now: number, limit: number): Promise<string[]>;
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
