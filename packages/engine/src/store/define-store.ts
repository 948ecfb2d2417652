import { FlowRefusedError, isStepfoldError, ValidationError } from '../errors.js';
import { flowCounters, flowHolders } from '../flow-holders.js';
import type { Snapshot } from '../snapshot.js';
import { definedClaims } from './claims.js';
import { remove, save } from './conditional-writes.js';
import type { FlowStore } from './flow.js';
import { createFlowOf, definedFlow } from './flow-calls.js';
import { definedInbox } from './inbox.js';
import { type SearchRow, searchRows } from './list-query.js';
import type { CreateOptions, DeleteOptions, DueQuery, ListPage, ListQuery, Store } from './store.js';
import type { InsertFlow, StoreDefinition, StoreDriver } from './store-driver.js';
import {
  createStoreKit,
  type EncodedSnapshot,
  type ListArgs,
  type ListSearch,
  storeErrorMapper,
} from './store-kit.js';
import { dueWindow, type StoreParts } from './store-parts.js';
import { definedStream } from './stream-calls.js';

/** The default lease of a claim, in ms: long enough for a slow tick, short enough that a crash delays little. */
export const DEFAULT_CLAIM_MS = 30_000;

/** A store {@link defineStore} made: the contract, plus the claim lease it resolved. */
export type DefinedStore = Store & { readonly claimMs: number };

/** The one `claimMs` rule of every store: a non-negative safe integer, default {@link DEFAULT_CLAIM_MS}. */
export function claimMsOption(value: number | undefined): number {
  const ms = value ?? DEFAULT_CLAIM_MS;
  if (!(Number.isSafeInteger(ms) && ms >= 0)) throw new RangeError('claimMs must be a non-negative integer');
  return ms;
}

/**
 * Makes a {@link Store} from an adapter's narrow database calls: every argument checked, every
 * snapshot encoded and size-checked, every driver failure that means "server unreachable" turned
 * into `STORE_UNAVAILABLE`, one `claimMs` rule, the claim window computed, a failed conditional
 * write told apart (`NOT_FOUND`, `VERSION_CONFLICT`, `NOTICE_MISMATCH`). The adapter keeps only its
 * database calls.
 *
 * @example
 * export function createMyStore(o: { db: Db; claimMs?: number }) {
 *   return defineStore(
 *     { name: 'mydb', isUnavailable: (e) => isNetworkError(e), sizes: { asked: undefined, fallback: 1 << 20 }, claimMs: o.claimMs },
 *     { setup, insert, select, update, version, due, page, remove },
 *   );
 * }
 */
export function defineStore(definition: StoreDefinition, driver: StoreDriver): DefinedStore {
  const parts: StoreParts = {
    definition,
    driver,
    kit: createStoreKit(definition.name, definition.isUnavailable, definition.sizes),
    unavailable: storeErrorMapper(definition.name, definition.isUnavailable),
    claimMs: claimMsOption(definition.claimMs),
    // Claims taken without a token of the caller's own are this store object's.
    ownToken: crypto.randomUUID(),
  };
  const flow = driver.flow ? definedFlow(parts, driver.flow) : undefined;
  // A plain object of own methods, not a class: callers wrap a store by spreading it.
  return {
    maxSnapshotBytes: parts.kit.maxSnapshotBytes,
    claimMs: parts.claimMs,
    setup: () => parts.kit.guard('setup', () => driver.setup()),
    create: (snapshot, options) => create(parts, snapshot, options),
    load: (id) => load(parts, id),
    save: (snapshot, expectedVersion, options) => save(parts, snapshot, expectedVersion, options),
    listDue: (now, limit, query) => listDue(parts, now, limit, query),
    list: (query) => list(parts, query),
    delete: (id, options) => removeWithStream(parts, id, options, flow),
    close: async () => driver.close?.(),
    ...(driver.claims ? { claims: definedClaims(parts, driver.claims) } : {}),
    ...(driver.inbox ? { inbox: definedInbox(parts, driver.inbox) } : {}),
    ...(driver.wakes ? { wakes: driver.wakes } : {}),
    ...(flow ? { flow } : {}),
    ...(driver.stream ? { stream: definedStream(parts, driver.stream) } : {}),
  };
}

/** `delete`, releasing the flow slots the instance held, and the instance's stream once it is gone. */
async function removeWithStream(
  parts: StoreParts,
  id: string,
  options: DeleteOptions | undefined,
  flow: FlowStore | undefined,
): Promise<boolean> {
  const gone = await (flow ? removeReleasing(parts, id, options, flow) : remove(parts, id, options));
  const stream = parts.driver.stream;
  // After the instance, never before: a failed stream delete leaves chunks behind, it breaks no instance.
  if (gone && stream) await parts.kit.guard('stream.remove', () => stream.remove(id));
  return gone;
}

/**
 * `delete` on a store that counts flow slots: what the stored instance holds (an instance limit, its
 * running attempts' slots, its waits) is released once it is gone, so the slots are free at once,
 * not when a lease lapses (an instance's hold never does). Deleted at the version read, so a write
 * in between cannot take a slot the release would miss: a lost race reads again (an unconditional
 * delete) or is the caller's conflict.
 */
async function removeReleasing(
  parts: StoreParts,
  id: string,
  options: DeleteOptions | undefined,
  flow: FlowStore,
): Promise<boolean> {
  for (;;) {
    // An unreadable row holds nothing anyone can name: deleted as asked.
    const s = await load(parts, id).catch((e: unknown) => {
      if (isStepfoldError(e, 'INVALID_SNAPSHOT')) return null;
      throw e;
    });
    if (s === null) return remove(parts, id, options);
    const version = options?.version ?? s.version;
    try {
      const gone = await remove(parts, id, { version });
      const holders = gone && version === s.version ? flowHolders(s) : [];
      if (holders.length) await flow.release(holders, Date.now(), flowCounters(holders, s));
      return gone;
    } catch (e) {
      if (options?.version !== undefined || !isStepfoldError(e, 'VERSION_CONFLICT')) throw e;
    }
  }
}

// Not async: the driver's answer is checked in the same `then` that maps its failure.
function create(parts: StoreParts, snapshot: Snapshot, options: CreateOptions | undefined): Promise<void> {
  let row: EncodedSnapshot;
  let flow: InsertFlow | undefined;
  let inserted: Promise<boolean | 'refused'>;
  try {
    row = parts.kit.encode(snapshot);
    if (options?.flow !== undefined) {
      if (!parts.driver.flow?.inInsert)
        throw new ValidationError('INVALID_OPTIONS', 'invalid create options', [
          {
            path: 'flow',
            message: 'this store takes no flow work in a create (its flow.inCreate is not true)',
          },
        ]);
      flow = createFlowOf(options.flow);
    }
  } catch (e) {
    return Promise.reject(e);
  }
  try {
    inserted = Promise.resolve(flow ? parts.driver.insert(row, flow) : parts.driver.insert(row));
  } catch (e) {
    return Promise.reject(parts.unavailable('create', e));
  }
  return inserted.then(
    (ok) => {
      if (ok === 'refused') throw new FlowRefusedError(row.id, flow?.take.holder ?? '');
      parts.kit.created(ok, row.id);
      // Written: with the take, or with nothing to take.
      options?.flow?.taken();
    },
    (e: unknown) => {
      throw parts.unavailable('create', e);
    },
  );
}

async function load(parts: StoreParts, id: string): Promise<Snapshot | null> {
  const json = await parts.kit.guard('load', () => parts.driver.select(parts.kit.id(id)));
  if (json === null) return null;
  const s = parts.kit.decode(json);
  // A row that names another instance (a hand-edited or misplaced row) is not this one.
  if (s.id !== id)
    throw new ValidationError(
      'INVALID_SNAPSHOT',
      `stored snapshot of ${id} names instance ${JSON.stringify(s.id)}`,
      [{ path: 'id', message: `must be ${id}` }],
    );
  return s;
}

async function listDue(
  parts: StoreParts,
  now: number,
  limit: number,
  query: DueQuery | undefined,
): Promise<string[]> {
  const window = dueWindow(parts, now, limit, query);
  return window === null ? [] : parts.kit.guard('listDue', () => parts.driver.due(window));
}

async function list(parts: StoreParts, query: ListQuery): Promise<ListPage> {
  const args = parts.kit.listArgs(query);
  if (!args) return { items: [], cursor: query.cursor || null };
  const { search } = args;
  if (search && !parts.driver.searches) return scanSearch(parts, args, search);
  return parts.kit.page(await parts.kit.guard('list', () => parts.driver.page(args)), args.limit, search);
}

/** Rows read per page by {@link scanSearch}. */
const SCAN_PAGE = 500;

/**
 * A search on a driver that does not search: every row the plain filters match, read page by
 * page in id order, filtered and ordered here. Correct on any driver, at the cost of a full read.
 */
async function scanSearch(parts: StoreParts, args: ListArgs, search: ListSearch): Promise<ListPage> {
  const rows: Array<SearchRow & { json: string }> = [];
  let cursor: string | null = null;
  const plain = { status: args.status, workflow: args.workflow, limit: SCAN_PAGE };
  for (;;) {
    const at: string | null = cursor;
    const page: ReadonlyArray<{ id: string; json: string }> = await parts.kit.guard('list', () =>
      parts.driver.page({ ...plain, cursor: at }),
    );
    for (const r of page.slice(0, SCAN_PAGE)) {
      const s = parts.kit.decode(r.json);
      rows.push({
        id: r.id,
        json: r.json,
        status: s.status,
        workflow: s.workflow.name,
        search: s.search ?? null,
      });
    }
    if (page.length <= SCAN_PAGE) break;
    cursor = page[SCAN_PAGE - 1]!.id;
  }
  return parts.kit.page(searchRows(rows, search, args.cursor, args.limit), args.limit, search);
}
