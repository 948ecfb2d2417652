import { NoticeMismatchError, ValidationError, VersionConflictError } from '../errors.js';
import { isTime } from '../event-time.js';
import type { Snapshot } from '../snapshot.js';
import {
  type DueClaims,
  type DueQuery,
  type Inbox,
  SENT_CLAIM_AFTER_MS,
  type SentDue,
  type SentSignal,
  type Store,
  type Unreadable,
} from './store.js';
import type { DueWindow, SentRow, StoreDefinition, StoreDriver, UpdateCondition } from './store-driver.js';
import { createStoreKit } from './store-kit.js';

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

const seqsOf = (seqs: readonly number[]): number[] =>
  Array.from(seqs, (n) => {
    if (!Number.isSafeInteger(n)) throw new RangeError(`sent signal seq must be an integer, got ${n}`);
    return n;
  });

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
  const kit = createStoreKit(definition.name, definition.isUnavailable, definition.sizes);
  const claimMs = claimMsOption(definition.claimMs);
  const { guard } = kit;
  // Claims taken without a token of the caller's own are this store object's.
  const ownToken = crypto.randomUUID();

  /** The due prologue of `listDue` and `claimDue`: null when nothing can match. */
  const windowOf = (now: number, limit: number, query: DueQuery | undefined): DueWindow | null => {
    const n = kit.dueLimit(now, limit);
    const workflow = kit.dueWorkflow(query);
    // Checked before the early return: a bad lease or token is refused whatever else the call asks.
    const lease = kit.dueLease(query, claimMs);
    const token = query?.token ?? ownToken;
    if (typeof token !== 'string' || token === '')
      throw new TypeError('listDue: token must be a non-empty string');
    if (n === null || workflow === null) return null;
    return { now, until: now + lease, limit: n, token, ...(workflow === undefined ? {} : { workflow }) };
  };

  /** Decodes claimed rows; with `onUnreadable`, a row that cannot be read is reported and left out (still claimed) rather than failing the rest. */
  const decodeEach = <R, T>(rows: R[], read: (row: R) => T | null, onUnreadable?: Unreadable): T[] => {
    if (!onUnreadable) return rows.flatMap((r) => read(r) ?? []);
    const out: T[] = [];
    for (const r of rows) {
      let got: T | null;
      try {
        got = read(r);
      } catch (e) {
        onUnreadable(e);
        continue;
      }
      if (got !== null) out.push(got);
    }
    return out;
  };

  const sentDue = (rows: SentRow[], onUnreadable?: Unreadable): SentDue[] =>
    decodeEach(
      rows,
      (r) => (r.sent.length ? { snapshot: kit.decode(r.json), sent: r.sent } : null),
      onUnreadable,
    );

  const claimsOf = (c: NonNullable<StoreDriver['claims']>): DueClaims => ({
    async claimDue(now, limit, query) {
      const window = windowOf(now, limit, query);
      const ids = query?.ids === undefined ? undefined : Array.from(query.ids, (id) => kit.id(id));
      if (window === null || ids?.length === 0) return [];
      const rows = await guard('claimDue', () => c.claim(ids === undefined ? window : { ...window, ids }));
      // Claimed by id, a row must be one of those asked for, as `load` checks (a misplaced or
      // hand-edited row names another instance); a lane's rows come back without their ids.
      const asked = ids === undefined ? null : new Set(ids);
      const read = (json: string) => {
        const s = kit.decode(json);
        if (asked && !asked.has(s.id))
          throw new ValidationError(
            'INVALID_SNAPSHOT',
            `a row claimed by id names instance ${JSON.stringify(s.id)}`,
            [{ path: 'id', message: 'must be one of the ids claimed' }],
          );
        return s;
      };
      return decodeEach(rows, read, query?.onUnreadable);
    },
    async release(ids, token = ownToken) {
      const list = Array.from(ids, (id) => kit.id(id));
      if (list.length) await guard('release', () => c.release(list, token));
    },
  });

  const inboxOf = (box: NonNullable<StoreDriver['inbox']>): Inbox => ({
    async send(id, event, accept) {
      // The event is untrusted until the reducer checks it; its time only orders and announces the
      // row. One that is no event time (NaN poisoned the due order and the wake notice; 1e308 left
      // the row unclaimable, its refusal never dropped) counts as 0: due for the inbox lane at once.
      const at = isTime(event.at) ? event.at : 0;
      const entry = { json: JSON.stringify(event), at, dueAt: at + SENT_CLAIM_AFTER_MS };
      return guard('send', () => box.append(kit.id(id), entry, [...accept]));
    },
    async claim(now, limit, ids, onUnreadable) {
      if (ids !== undefined) {
        const list = Array.from(ids, (x) => kit.id(x));
        return list.length ? sentDue(await guard('claimSent', () => box.claimIds(list)), onUnreadable) : [];
      }
      const n = kit.dueLimit(now, limit);
      if (n === null) return [];
      const window = { now, until: now + claimMs, limit: n, token: ownToken };
      return sentDue(await guard('claimSent', () => box.claim(window)), onUnreadable);
    },
    async drop(id, seqs, version) {
      const list = seqsOf(seqs);
      if (list.length) await guard('dropSent', () => box.drop(kit.id(id), list, version));
    },
  });

  /** The condition of a save: the version and the seqs it consumes. */
  const conditionOf = (expected: number, consumed: readonly SentSignal[] | undefined): UpdateCondition => {
    if (!Number.isSafeInteger(expected)) throw new RangeError('save: expectedVersion must be an integer');
    if (!consumed?.length) return { expected };
    if (!driver.inbox) throw new TypeError('save: consumed seqs on a store without an inbox');
    return { expected, consumed: seqsOf(consumed.map((p) => p.seq)) };
  };

  /** {@link conditionOf} plus the snapshot (and the consumed signals, in the order given: oldest first) it must find. */
  const matchedConditionOf = async (
    expected: number,
    consumed: readonly SentSignal[] | undefined,
    matches: Snapshot,
  ): Promise<UpdateCondition> => {
    const condition = conditionOf(expected, consumed);
    if (matches.version !== expected)
      throw new ValidationError('INVALID_SNAPSHOT', 'save: matches must be the expected version', []);
    const json = JSON.stringify(matches);
    const sent = (consumed ?? []).map((p) => JSON.stringify(p.event));
    const text = json + sent.map((e) => `\n${e}`).join('');
    return { ...condition, match: { json, sent, digest: (await definition.digest?.(text)) ?? '' } };
  };

  const store: DefinedStore = {
    maxSnapshotBytes: kit.maxSnapshotBytes,
    claimMs,
    setup: () => guard('setup', () => driver.setup()),
    async create(snapshot) {
      const row = kit.encode(snapshot);
      kit.created(await guard('create', () => driver.insert(row)), row.id);
    },
    async load(id) {
      const json = await guard('load', () => driver.select(kit.id(id)));
      if (json === null) return null;
      const s = kit.decode(json);
      // A row that names another instance (a hand-edited or misplaced row) is not this one.
      if (s.id !== id)
        throw new ValidationError(
          'INVALID_SNAPSHOT',
          `stored snapshot of ${id} names instance ${JSON.stringify(s.id)}`,
          [{ path: 'id', message: `must be ${id}` }],
        );
      return s;
    },
    async save(snapshot, expectedVersion, options) {
      const row = kit.encode(snapshot);
      // Only a matched save waits for a digest: the common save goes straight to the driver.
      const condition =
        options?.matches === undefined
          ? conditionOf(expectedVersion, options?.consumed)
          : await matchedConditionOf(expectedVersion, options.consumed, options.matches);
      let outcome = await guard('save', () => driver.update(row, condition));
      if (outcome === 'failed') {
        // The condition failed: tell a lost race from a missing instance and from a forged notice.
        const stored = await guard('save', () => driver.version(row.id));
        if (stored === expectedVersion && condition.match) throw new NoticeMismatchError(row.id, stored);
        outcome = stored === null ? 'missing' : { stored };
      }
      kit.updated(outcome, row.id, expectedVersion);
    },
    async listDue(now, limit, query) {
      const window = windowOf(now, limit, query);
      return window === null ? [] : guard('listDue', () => driver.due(window));
    },
    async list(query) {
      const args = kit.listArgs(query);
      if (!args) return { items: [], cursor: query.cursor || null };
      return kit.page(await guard('list', () => driver.page(args)), args.limit);
    },
    async delete(id, options) {
      const key = kit.id(id);
      const version = options?.version;
      if (version === undefined) return guard('delete', () => driver.remove(key));
      if (!Number.isSafeInteger(version)) throw new RangeError('delete: version must be an integer');
      if (await guard('delete', () => driver.remove(key, version))) return true;
      // The condition failed: a missing id is false, as for an unconditional delete; any stored
      // version is a lost race, even the one asked for (the instance was re-created meanwhile).
      const stored = await guard('delete', () => driver.version(key));
      if (stored === null) return false;
      throw new VersionConflictError(key, version, stored);
    },
    close: async () => driver.close?.(),
    ...(driver.claims ? { claims: claimsOf(driver.claims) } : {}),
    ...(driver.inbox ? { inbox: inboxOf(driver.inbox) } : {}),
    ...(driver.wakes ? { wakes: driver.wakes } : {}),
  };
  return store;
}
