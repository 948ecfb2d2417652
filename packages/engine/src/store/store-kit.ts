import {
  AlreadyExistsError,
  NotFoundError,
  SnapshotTooLargeError,
  StoreUnavailableError,
  ValidationError,
  VersionConflictError,
} from '../errors.js';
import { assertValidId, isValidId } from '../ids.js';
import { isSearchRecord, type SearchValue } from '../search.js';
import {
  isFairKey,
  isPriority,
  MAX_FAIR_KEY_LENGTH,
  MAX_PRIORITY,
  PRIORITY_AGING_MS,
  type Snapshot,
  type Status,
} from '../snapshot.js';
import { admitSnapshot } from '../snapshot-format.js';
import {
  type CheckedSearch,
  checkSearch,
  parseSearchCursor,
  type SearchCursor,
  searchCursorText,
} from './list-query.js';
import { type DueQuery, type ListPage, type ListQuery, snapshotBytes } from './store.js';
import { hasRunningTask, isHandoffNotice, wakeNotice } from './wake-notice.js';

// What every store adapter repeats, in one place: argument checks, id validation, encoding and the
// size limit, and turning driver failures into STORE_UNAVAILABLE. An adapter keeps its database calls.

/** A snapshot checked and serialized for writing, with the fields stores index. */
export interface EncodedSnapshot {
  id: string;
  version: number;
  status: Status;
  workflow: string;
  /** The definition it runs on as `name@version@hash`: what an inbox's `accept` lists. */
  definition: string;
  /**
   * The wake time to index: `wakeAt` when finite (JSON has no Infinity or NaN: index what a load
   * gives back), rounded up to {@link DEADLINE_INDEX_MS} when it is only a running task's deadline,
   * moved earlier by the priority of work due at once (see `indexedWake`); else null.
   */
  wakeAt: number | null;
  /**
   * The fairness group the due order rotates over (see `Store.listDue`): the snapshot's non-empty
   * `fairKey`, or null for the group of instances without one.
   */
  fairKey: string | null;
  /** The wake time to announce on the store's wake channel, or null (see {@link wakeNotice}). */
  notice: number | null;
  /** The notice hands a task to any worker (see {@link isHandoffNotice}): the store may send `json` with it. */
  handoff: boolean;
  /** The notice announces a timer while a task of the instance runs (see `isBusyNotice`): sent with it as `"b":1`. */
  busy: boolean;
  json: string;
  /** The snapshot's search attributes (`Snapshot.search`), checked, or null when it has none. */
  search: Readonly<Record<string, SearchValue>> | null;
}

/** The arguments of `list`, checked: filters that can match something, a positive page size. */
export interface ListArgs {
  status?: string | undefined;
  workflow?: string | undefined;
  /** In id order (ascending, or descending with `search.desc`): only ids after this one. */
  cursor: string | null;
  limit: number;
  /**
   * The query's `where` and `orderBy`, when it has any (see {@link ListSearch}): a driver that
   * declares `searches` applies them; for one that does not, `defineStore` filters its pages.
   */
  search?: ListSearch | undefined;
}

/**
 * `list`'s search part, checked. `statuses` and `workflows` (from `where`, with the top-level
 * `status` and `workflow`) are the values each must be one of. With `orderBy` (an attribute), only
 * instances that have it are listed, by (value, id) as {@link compareSearch} orders values, from
 * after `after`; else by id from after `cursor`. `desc` reverses either order.
 */
export interface ListSearch extends CheckedSearch {
  after: SearchCursor | null;
}

/** What a conditional update found: written, no such instance, or another version stored. */
export type UpdateOutcome = 'written' | 'missing' | { stored: number };

/** The snapshot size limits of {@link createStoreKit}, in UTF-8 bytes of the JSON. */
export interface SizeLimits {
  /** What the user asked for (undefined: `fallback`). */
  asked: number | undefined;
  /** The adapter's default. */
  fallback: number;
  /** The most the database can hold (default: `fallback`). */
  most?: number | undefined;
}

/**
 * Socket-level error codes (Node's net, DNS and HTTP stacks) that mean the server is not there,
 * went away, or cannot be reached right now: an unavailable server for every database.
 */
export const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
]);

/** Whether `e` carries one of the {@link NETWORK_ERROR_CODES} as its `code`. */
export function isNetworkError(e: unknown): boolean {
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  return typeof code === 'string' && NETWORK_ERROR_CODES.has(code);
}

/**
 * Granularity of a wake time that is only a running task's deadline, as stores index it: rounded
 * up to the next multiple of this many ms. Each step of a running instance moves its deadline by
 * a few ms; rounded, consecutive saves index the same time, so the database can update the row
 * without touching its wake-time indexes (PostgreSQL's HOT updates). The cost: a task lost with
 * its runner is found at most this much later than its deadline.
 */
export const DEADLINE_INDEX_MS = 1000;

/**
 * The wake time a store indexes: exact, unless it is only a running task's deadline or lease end
 * (see {@link DEADLINE_INDEX_MS}; a lease moves on every heartbeat, so it is rounded alike), or
 * the instance is due at once (by the time of the write) with a priority: then that many times
 * {@link PRIORITY_AGING_MS} earlier, so the due order every store returns, earliest first, takes
 * it ahead of work that waits less than its head start. Timers later than the write keep their
 * times: they are not work that waits.
 */
function indexedWake(snapshot: Snapshot, wake: number, notice: number | null): number {
  const priority = snapshot.priority;
  if (priority && wake <= snapshot.updatedAt) return wake - priority * PRIORITY_AGING_MS;
  if (notice !== null) return wake;
  // A loop, not Object.values(...).some: this runs on every save.
  for (const key in snapshot.tasks) {
    const t = snapshot.tasks[key]!;
    if (t.deadline === wake || t.leaseUntil === wake)
      return Math.ceil(wake / DEADLINE_INDEX_MS) * DEADLINE_INDEX_MS;
  }
  return wake;
}

// Larger pages would only build replies nobody can hold.
const MAX_PAGE = 1_000_000_000;

/** The shared half of a store adapter: see {@link createStoreKit}. */
export interface StoreKit {
  readonly maxSnapshotBytes: number;
  /** Checks ids, version and size, then serializes; throws before anything reaches the server. */
  encode(snapshot: Snapshot): EncodedSnapshot;
  /** The stored JSON back as a snapshot. */
  decode(json: string): Snapshot;
  /** Runs a driver call, turning an unavailable server into `STORE_UNAVAILABLE` (the driver error as cause). */
  guard<T>(what: string, call: () => Promise<T>): Promise<T>;
  /** Throws `INVALID_ID` unless `id` is a valid id. */
  id(id: unknown): string;
  /** `listDue`'s limit as a page size, or null when nothing can be due (a `now` that is not a number is a RangeError). */
  dueLimit(now: number, limit: number): number | null;
  /**
   * `listDue`'s workflow filter checked: undefined for none, null when no instance can match (a
   * name that is not a valid id), else the name. A non-string is a TypeError.
   */
  dueWorkflow(query: DueQuery | undefined): string | null | undefined;
  /** The claim lease of a `listDue`/`claimDue` call: `query.leaseMs`, else `fallback` (the store's `claimMs`); a RangeError unless a non-negative safe integer. */
  dueLease(query: DueQuery | undefined, fallback: number): number;
  /** `list`'s arguments checked (a non-string filter is a TypeError), or null when no row can match. */
  listArgs(query: ListQuery): ListArgs | null;
  /** A page from up to `limit + 1` rows in the listing's order: the extra row says another page exists. */
  page(rows: ReadonlyArray<{ id: string; json: string }>, limit: number, search?: ListSearch): ListPage;
  /** Throws `ALREADY_EXISTS` unless an insert created the row. */
  created(inserted: boolean, id: string): void;
  /** Throws `NOT_FOUND` or `VERSION_CONFLICT` unless a conditional update wrote. */
  updated(outcome: UpdateOutcome, id: string, expectedVersion: number): void;
}

/**
 * What a failed driver call of `what` rejects with, as {@link storeGuard} maps it: an unavailable
 * server as `STORE_UNAVAILABLE` (the driver error as its cause), every other error as it is. For
 * a caller that handles the driver's answer in the same `then` (one promise less per call).
 */
export function storeErrorMapper(
  name: string,
  isUnavailable: (error: unknown) => boolean,
): (what: string, error: unknown) => unknown {
  return (what, e) => {
    if (!isUnavailable(e)) return e;
    const detail = e instanceof Error ? e.message || e.name : String((e as { code?: unknown })?.code ?? e);
    return new StoreUnavailableError(`${name} ${what} failed: ${detail}`, e);
  };
}

/**
 * A wrapper for driver calls that turns an unavailable server into `STORE_UNAVAILABLE` (the driver
 * error as its cause) and lets every other error through.
 */
export function storeGuard(
  name: string,
  isUnavailable: (error: unknown) => boolean,
): <T>(what: string, call: () => Promise<T>) => Promise<T> {
  const mapped = storeErrorMapper(name, isUnavailable);
  // No async wrapper: every driver call of every write goes through here, and an extra async
  // frame costs a promise and microtask turns per call. A call that throws synchronously is mapped
  // the same as one that rejects.
  return <T>(what: string, call: () => Promise<T>): Promise<T> => {
    let p: Promise<T>;
    try {
      p = Promise.resolve(call());
    } catch (e) {
      return Promise.reject(mapped(what, e));
    }
    return p.then(undefined, (e: unknown) => {
      throw mapped(what, e);
    });
  };
}

/**
 * The shared half of a store adapter: checks, encoding, the size limit and error mapping, so an
 * adapter is its database calls around these.
 *
 * @example
 * const kit = createStoreKit('mydb', isUnavailable, { asked: options.maxSnapshotBytes, fallback: 1 << 20, most: 16 << 20 });
 * const store: Store = {
 *   maxSnapshotBytes: kit.maxSnapshotBytes,
 *   async save(snapshot, expected) {
 *     const row = kit.encode(snapshot);
 *     kit.updated(await kit.guard('save', () => db.update(row, expected)), row.id, expected);
 *   },
 *   // ...
 * };
 */
export function createStoreKit(
  name: string,
  isUnavailable: (error: unknown) => boolean,
  sizes: SizeLimits,
): StoreKit {
  const ceiling = sizes.most ?? sizes.fallback;
  const max = sizes.asked ?? sizes.fallback;
  if (!(Number.isInteger(max) && max > 0 && max <= ceiling)) {
    throw new RangeError(`maxSnapshotBytes must be an integer in 1..${ceiling}`);
  }
  // The `definition` of the last snapshot encoded, and what it was made of: most writes name the
  // same definition as the one before, and the string is not built again for them.
  let named = { name: '', version: Number.NaN, hash: '', definition: '' };
  const definitionOf = ({ name, version, hash }: Snapshot['workflow']): string => {
    if (name !== named.name || version !== named.version || hash !== named.hash)
      named = { name, version, hash, definition: `${name}@${version}@${hash}` };
    return named.definition;
  };
  return {
    maxSnapshotBytes: max,
    encode(snapshot) {
      assertValidId(snapshot.id);
      assertValidId(snapshot.workflow?.name, 'workflow name');
      assertValidId(snapshot.status, 'status');
      if (!Number.isSafeInteger(snapshot.version)) {
        throw new ValidationError(
          'INVALID_SNAPSHOT',
          `snapshot ${JSON.stringify(snapshot.id)}: bad version`,
          [{ path: 'version', message: 'must be a safe integer' }],
        );
      }
      const fair = snapshot.fairKey;
      if (fair !== undefined && !isFairKey(fair)) {
        throw new ValidationError(
          'INVALID_SNAPSHOT',
          `snapshot ${JSON.stringify(snapshot.id)}: bad fairKey`,
          [{ path: 'fairKey', message: `must be a string of at most ${MAX_FAIR_KEY_LENGTH} characters` }],
        );
      }
      if (snapshot.priority !== undefined && !isPriority(snapshot.priority)) {
        throw new ValidationError(
          'INVALID_SNAPSHOT',
          `snapshot ${JSON.stringify(snapshot.id)}: bad priority`,
          [{ path: 'priority', message: `must be an integer from 0 to ${MAX_PRIORITY}` }],
        );
      }
      if (snapshot.search !== undefined && !isSearchRecord(snapshot.search)) {
        throw new ValidationError(
          'INVALID_SNAPSHOT',
          `snapshot ${JSON.stringify(snapshot.id)}: bad search attributes`,
          [{ path: 'search', message: 'must be an object of search attribute values' }],
        );
      }
      const json = jsonOf(snapshot);
      // A UTF-16 unit is at most 3 UTF-8 bytes: short JSON cannot reach the limit, so skip the count.
      if (json.length * 3 > max) {
        const bytes = snapshotBytes(json);
        if (bytes > max) throw new SnapshotTooLargeError(snapshot.id, bytes, max);
      }
      const wake = snapshot.wakeAt;
      const notice = wakeNotice(snapshot);
      const handoff = notice !== null && isHandoffNotice(snapshot, notice);
      return {
        id: snapshot.id,
        version: snapshot.version,
        status: snapshot.status,
        workflow: snapshot.workflow.name,
        definition: definitionOf(snapshot.workflow),
        fairKey: fair ? fair : null,
        wakeAt:
          typeof wake === 'number' && Number.isFinite(wake) ? indexedWake(snapshot, wake, notice) : null,
        notice,
        handoff,
        busy: notice !== null && !handoff && hasRunningTask(snapshot),
        json,
        search: snapshot.search && Object.keys(snapshot.search).length ? snapshot.search : null,
      };
    },
    decode: parseStored,
    guard: storeGuard(name, isUnavailable),
    id(id) {
      assertValidId(id);
      return id;
    },
    dueLimit(now, limit) {
      if (typeof now !== 'number' || Number.isNaN(now)) throw new RangeError('listDue: now must be a number');
      return limit >= 1 ? Math.min(Math.floor(limit), MAX_PAGE) : null;
    },
    dueWorkflow(query) {
      const workflow = query?.workflow;
      if (workflow === undefined) return undefined;
      if (typeof workflow !== 'string') throw new TypeError('listDue: workflow must be a string');
      return isValidId(workflow) ? workflow : null;
    },
    dueLease(query, fallback) {
      const ms = query?.leaseMs;
      if (ms === undefined) return fallback;
      if (!(Number.isSafeInteger(ms) && ms >= 0))
        throw new RangeError(`listDue: leaseMs must be a non-negative integer, got ${String(ms)}`);
      return ms;
    },
    listArgs(query) {
      const { status, workflow } = query;
      const searched =
        (query.where !== undefined && Object.keys(query.where).length > 0) || query.orderBy !== undefined;
      const checked = searched ? checkSearch(query.where, query.orderBy) : undefined;
      const after = checked?.orderBy !== undefined && query.cursor ? parseSearchCursor(query.cursor) : null;
      const cursor = after ? null : query.cursor || null;
      for (const [key, value] of [
        ['status', status],
        ['workflow', workflow],
        ['cursor', cursor],
      ] as const) {
        if (value !== undefined && value !== null && typeof value !== 'string') {
          throw new TypeError(`list: ${key} must be a string`);
        }
      }
      if (cursor !== null) assertValidId(cursor, 'cursor');
      if (!(query.limit >= 1)) return null;
      // Every stored status and workflow name is a valid id: anything else matches nothing.
      if ((status !== undefined && !isValidId(status)) || (workflow !== undefined && !isValidId(workflow))) {
        return null;
      }
      const limited = Math.min(Math.floor(query.limit), MAX_PAGE);
      if (!checked)
        return {
          ...(status === undefined ? {} : { status }),
          ...(workflow === undefined ? {} : { workflow }),
          cursor,
          limit: limited,
        };
      const statuses = both(status, checked.statuses);
      const workflows = both(workflow, checked.workflows);
      if (statuses?.length === 0 || workflows?.length === 0) return null;
      return {
        ...(statuses?.length === 1 ? { status: statuses[0] } : {}),
        ...(workflows?.length === 1 ? { workflow: workflows[0] } : {}),
        cursor,
        limit: limited,
        search: { ...checked, statuses, workflows, after },
      };
    },
    page(rows, limit, search) {
      const kept = rows.slice(0, limit);
      const items = kept.map((r) => parseStored(r.json));
      const last = items[items.length - 1];
      let next: string | null = null;
      if (rows.length > limit && last) {
        const value = search?.orderBy === undefined ? undefined : last.search?.[search.orderBy];
        next = value === undefined ? last.id : searchCursorText({ value, id: last.id });
      }
      return { items, cursor: next };
    },
    created(inserted, id) {
      if (!inserted) throw new AlreadyExistsError(id);
    },
    updated(outcome, id, expectedVersion) {
      if (outcome === 'written') return;
      if (outcome === 'missing') throw new NotFoundError(id);
      throw new VersionConflictError(id, expectedVersion, outcome.stored);
    },
  };
}

/** The values a built-in must be one of: the top-level filter's and `where`'s, both. */
function both(top: string | undefined, where: string[] | undefined): string[] | undefined {
  if (top === undefined) return where;
  return where === undefined ? [top] : where.filter((x) => x === top);
}

/**
 * The snapshot's JSON; data JSON cannot hold (a BigInt, a cycle, a nest deeper than the encoder's
 * stack) is INVALID_SNAPSHOT, nothing written, rather than the encoder's TypeError or RangeError.
 */
function jsonOf(snapshot: Snapshot): string {
  try {
    return JSON.stringify(snapshot);
  } catch (e) {
    if (!(e instanceof TypeError || e instanceof RangeError)) throw e;
    throw new ValidationError(
      'INVALID_SNAPSHOT',
      `snapshot ${JSON.stringify(snapshot.id)} is not JSON: ${e.message}`,
      [{ path: '', message: e.message }],
    );
  }
}

/**
 * A stored snapshot's text, parsed and brought to this engine's format. Text that is not JSON (a
 * torn or hand-edited row), or that an upgrade link cannot read, is INVALID_SNAPSHOT rather than
 * the parser's SyntaxError or a link's TypeError: the caller learns which row is bad, nothing is written.
 */
function parseStored(json: string): Snapshot {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (e) {
    throw new ValidationError('INVALID_SNAPSHOT', `stored snapshot is not JSON: ${(e as Error).message}`, [
      { path: '', message: (e as Error).message },
    ]);
  }
  return admitSnapshot(value);
}
