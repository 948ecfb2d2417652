import { canonicalJson } from '../content-hash.js';
import {
  AlreadyExistsError,
  isStepfoldError,
  NoticeMismatchError,
  SnapshotTooLargeError,
  ValidationError,
  VersionConflictError,
} from '../errors.js';
import type { Snapshot } from '../snapshot.js';
import { type DeleteOptions, type SaveOptions, type Store, snapshotBytes } from '../store/store.js';
import { type MoveOptions, type MoveResult, type MoverState, moveToCold } from './mover.js';
import { tieredClaims, tieredList, tieredListDue } from './tiered-reads.js';

// Two stores as one: a hot one (say Redis) for live instances and a cold one (PostgreSQL, MongoDB,
// DynamoDB) for finished and long-sleeping ones. Neither store can compare-and-set across both, so
// the tiers follow one protocol:
//
// 1. Writers write hot only. A save goes to hot; when hot has no such instance it lives in cold
//    and the save promotes it: check cold holds it at the expected version `v`, `hot.create`
//    the new snapshot (ALREADY_EXISTS: another writer promoted it first, a lost race), then
//    `cold.delete(id, { version: v })`. Cold changes only by the mover's copies and by deletes,
//    so every state change of an instance is one conditional operation in hot: no two saves from
//    one version can both land while it is in hot, and a promotion is decided by hot's create.
// 2. Hot wins every read: `load` asks hot, then cold, then hot again (a promotion may have
//    finished between the two); `list` keeps the hot copy of an id in both. A copy in both tiers
//    exists mid-move or after a crash mid-move; the cold one is then invisible, and the next
//    move of that instance overwrites it (`cold.save` at its version) or removes it.
// 3. The mover demotes an idle instance: `cold.create(copy)` (or `cold.save` over a stale copy),
//    then `hot.delete(id, { version })`. A writer that moved it on in between makes that delete
//    lose: the mover then deletes its cold copy at the copied version and leaves the instance hot.
//    At every moment the instance is in hot, in cold, or in both with hot the newer: nothing is
//    lost, and no read can see an older version after a newer one.
// 4. The hole is ABA on hot's absence: writer A reads the cold copy at v and stalls; writer B
//    promotes it (v+1); the mover demotes it again; A's `hot.create` now succeeds on a history
//    that moved on. Three fences: the mover never demotes an instance updated in the last
//    `minAgeMs` (so B's promotion keeps it hot that long); A reads cold again inside `save`, right
//    before its create (the stall must fall in one round trip); and A's final
//    `cold.delete(id, { version: v })` must find the copy it promoted from: any promotion or
//    demotion since changed or removed it (versions only grow), so A deletes its own hot copy at
//    its version and reports VERSION_CONFLICT. A fork survives only if A stalls longer than
//    `minAgeMs` inside one round trip and a third writer builds on A's copy before A's check.
//    An airtight fence would need a hot tombstone per cold instance (hot never empty, so every
//    move is a hot compare-and-set), at the price of hot memory for every instance ever moved.
// 5. Capabilities: wakes are hot's (every write is a hot write; cold instances are found by
//    `listDue`, which asks cold for a share of each batch); claims when both tiers have them; no
//    inbox: a signal sent to a cold instance could not be consumed by a save that goes to hot, so
//    `runner.send` takes its direct path (load and save, which promotes).

/** Options of {@link createTieredStore}. */
export interface TieredStoreOptions {
  /** Live instances: every write goes here. */
  hot: Store;
  /** Finished and long-sleeping instances, moved here by {@link TieredStore.move}. */
  cold: Store;
  /** A finished instance moves once its last update is this old (ms, default 60 000). */
  finishedAfterMs?: number | undefined;
  /** A waiting instance with no task in flight moves when its wake time is further than this (ms, default 3 600 000; no wake time counts as infinitely far). */
  sleepingMs?: number | undefined;
  /**
   * Nothing updated in the last `minAgeMs` moves (default 60 000): the fence against a stalled
   * promotion (see the module's notes). Keep it far above any write's duration and clock skew.
   */
  minAgeMs?: number | undefined;
  /** Demotions run at once by one `move` call (default 16). */
  moveConcurrency?: number | undefined;
}

/** A {@link Store} over a hot and a cold store, with the mover that keeps hot small. */
export interface TieredStore extends Store {
  readonly hot: Store;
  readonly cold: Store;
  /**
   * Demotes idle instances from hot to cold: looks at up to `limit` hot instances (finished and
   * waiting ones, continuing where the last call stopped) and moves those eligible.
   */
  move(options: MoveOptions): Promise<MoveResult>;
}

const nonNegative = (name: string, value: number | undefined, fallback: number): number => {
  const v = value ?? fallback;
  if (!(Number.isSafeInteger(v) && v >= 0))
    throw new RangeError(`createTieredStore: ${name} must be a non-negative integer`);
  return v;
};

/** Whether `e` is a lost race a caller reports as such. */
const isConflict = (e: unknown) => isStepfoldError(e, 'VERSION_CONFLICT');

/**
 * One store over two: hot for live instances, cold for finished and long-sleeping ones, with a
 * mover (`move`) that demotes idle instances and saves that promote them back. It passes the store
 * conformance suite as one store; see the module notes for why a move loses and doubles nothing.
 *
 * @example
 * const tiered = createTieredStore({ hot: createMemoryStore(), cold: createMemoryStore(), finishedAfterMs: 0, minAgeMs: 0 });
 * await tiered.setup();
 * const { demoted } = await tiered.move({ now: Date.now(), limit: 100 });
 */
export function createTieredStore(options: TieredStoreOptions): TieredStore {
  const { hot, cold } = options;
  // One store in both tiers: every promotion would find the instance already there (ALREADY_EXISTS).
  if (hot === cold) {
    const message = 'hot and cold are the same store: give two stores (two tables, or two databases)';
    throw new ValidationError('INVALID_OPTIONS', 'invalid createTieredStore options', [
      { path: 'cold', message },
    ]);
  }
  const max = Math.min(hot.maxSnapshotBytes, cold.maxSnapshotBytes);
  const state: MoverState = {
    hot,
    cold,
    finishedAfterMs: nonNegative('finishedAfterMs', options.finishedAfterMs, 60_000),
    sleepingMs: nonNegative('sleepingMs', options.sleepingMs, 3_600_000),
    minAgeMs: nonNegative('minAgeMs', options.minAgeMs, 60_000),
    concurrency: Math.max(1, nonNegative('moveConcurrency', options.moveConcurrency, 16)),
    cursors: new Map(),
    turn: 0,
  };

  /** Hot may accept more than cold: a snapshot must fit both, or it could never move. */
  const fits = (s: Snapshot) => {
    if (hot.maxSnapshotBytes <= max) return;
    const bytes = snapshotBytes(JSON.stringify(s));
    if (bytes > max) throw new SnapshotTooLargeError(s.id, bytes, max);
  };

  /** A save of an instance hot does not hold: promote it from cold (see the module notes, 1 and 4). */
  const promote = async (s: Snapshot, v: number, o: SaveOptions | undefined): Promise<void> => {
    const stored = await cold.load(s.id);
    // Not in cold either: hot's own answer (NOT_FOUND, or a conflict if a promotion just landed).
    if (stored === null) return hot.save(s, v, o);
    if (stored.version !== v) throw new VersionConflictError(s.id, v, stored.version);
    if (o?.matches && canonicalJson(o.matches) !== canonicalJson(stored))
      throw new NoticeMismatchError(s.id, v);
    try {
      await hot.create(s);
    } catch (e) {
      if (!isStepfoldError(e, 'ALREADY_EXISTS')) throw e;
      throw new VersionConflictError(s.id, v, (await hot.load(s.id))?.version ?? null);
    }
    const removed = await cold.delete(s.id, { version: v }).catch((e: unknown) => {
      if (isConflict(e)) return false;
      throw e;
    });
    if (removed) return;
    // The copy promoted from is gone or changed: our create raced a promotion and a demotion (or a
    // delete). Take ours back; the history that moved on is the instance.
    await hot.delete(s.id, { version: s.version }).catch((e: unknown) => {
      if (!isConflict(e)) throw e;
    });
    throw new VersionConflictError(s.id, v, (await cold.load(s.id))?.version ?? null);
  };

  const store: TieredStore = {
    hot,
    cold,
    maxSnapshotBytes: max,
    async setup() {
      await hot.setup();
      await cold.setup();
    },
    async create(s) {
      fits(s);
      if (await cold.load(s.id)) throw new AlreadyExistsError(s.id);
      await hot.create(s);
      // A demotion of an instance with this id may have landed between the check and the create.
      if (await cold.load(s.id)) {
        await hot.delete(s.id, { version: s.version }).catch(() => false);
        throw new AlreadyExistsError(s.id);
      }
    },
    async load(id) {
      return (await hot.load(id)) ?? (await cold.load(id)) ?? (await hot.load(id));
    },
    async save(s, v, o) {
      if (o?.consumed?.length) throw new TypeError('save: consumed seqs on a store without an inbox');
      fits(s);
      try {
        return await hot.save(s, v, o);
      } catch (e) {
        if (!isStepfoldError(e, 'NOT_FOUND')) throw e;
      }
      return promote(s, v, o);
    },
    listDue: (now, limit, query) => tieredListDue(hot, cold, now, limit, query),
    list: (query) => tieredList(hot, cold, query),
    async delete(id, o?: DeleteOptions) {
      const version = o?.version;
      if (version === undefined) {
        const inHot = await hot.delete(id);
        return (await cold.delete(id)) || inHot;
      }
      if (await hot.delete(id, { version })) {
        await cold.delete(id); // a stale copy, if any
        return true;
      }
      if (await cold.delete(id, { version })) return true;
      // Promoted meanwhile: hot's answer (a conflict), or gone.
      return hot.delete(id, { version });
    },
    async close() {
      await Promise.all([hot.close(), cold.close()]);
    },
    move: (o) => moveToCold(state, o),
    ...(hot.wakes ? { wakes: hot.wakes } : {}),
    ...(hot.claims && cold.claims ? { claims: tieredClaims(hot, hot.claims, cold.claims) } : {}),
  };
  return store;
}
