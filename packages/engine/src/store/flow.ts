// The `flow` capability of a store: concurrency slots and rate windows per key, counted by the
// store so that every runner, process and runtime sharing it sees one count. The reducer says
// what a task (or an instance) needs as data (`FlowNeed`); the runner asks the store for it.

import type { FlowCounterRef, FlowNeed } from '../flow-need.js';

export type { FlowNeed };

/** What a store said to {@link FlowStore.acquire}: granted, or the first need it could not meet. */
export type FlowGrant =
  | { granted: true }
  | {
      granted: false;
      need: FlowNeed;
      /**
       * When the need can be met at the earliest: a rate window's next free start (epoch ms), or
       * the earliest lease of a holder of a full slot to lapse; null when no time is known (holders
       * that end with their instance). The waiter is woken by a release before that, where one frees.
       */
      until: number | null;
      /** Holders (concurrency) or starts in the window (rate) the store counted. */
      count: number;
    };

/**
 * What a save does to the flow counts in the same write (`SaveOptions.flow`, on a store whose
 * `flow.inSave` is true): `take` acquired as {@link FlowStore.acquire} would acquire it at `now`
 * and `release` released as {@link FlowStore.release} would release it, first, when the save is
 * written; a `take` whose needs are not met writes nothing at all (the save rejects with
 * `FLOW_REFUSED`, and records no waiter).
 */
export interface SaveFlow {
  /** A holder to acquire with the save: every need met (held until `until`), or nothing written. */
  take?: { holder: string; needs: readonly FlowNeed[]; until: number } | undefined;
  /** Holders to release with the save (the ends it records). */
  release?: readonly string[] | undefined;
  /** Where `release`'s holders hold or wait, as {@link FlowStore.release} takes them (absent: unknown). */
  counters?: readonly FlowCounterRef[] | undefined;
  /** The caller's time: what the take and the release judge leases and windows at. */
  now: number;
  /** Told the instances the release woke, once the save is written (what `release` answers). */
  woken?: ((ids: string[]) => void) | undefined;
}

/**
 * What a create does to the flow counts in the same write (`CreateOptions.flow`, on a store whose
 * `flow.inCreate` is true): `take` acquired as {@link FlowStore.acquire} would acquire it at `now`,
 * with the instance, all or nothing. A `take` whose needs are not met writes nothing (the create
 * rejects with `FLOW_REFUSED` and records no waiter); an id taken (`ALREADY_EXISTS`) takes nothing.
 * The store calls `taken` once the instance is written with its take: a create that resolves
 * without calling it (a wrapper that did not pass the option on) wrote the instance alone, and the
 * caller takes the holder itself.
 */
export interface CreateFlow {
  /** The holder to acquire with the create: every need met (held until `until`), or nothing written. */
  take: { holder: string; needs: readonly FlowNeed[]; until: number };
  /** The caller's time: what the take judges leases and windows at. */
  now: number;
  /** Told once the instance is written and the holder taken with it: the store's word that it took. */
  taken: () => void;
}

/** A key with holders or waiters, as {@link FlowStore.list} reports it. */
export interface FlowKeyState {
  scope: string;
  key: string;
  limit: number;
  periodMs?: number | undefined;
  /** Holders whose lease has not lapsed (concurrency), or starts in the current window (rate). */
  holders: Array<{ holder: string; until: number }>;
  /** Instances waiting for this key, oldest first. */
  waiting: Array<{ holder: string; instance: string; since: number }>;
}

/** One page of {@link FlowStore.list}; `cursor` is null on the last page. */
export interface FlowKeyPage {
  items: FlowKeyState[];
  cursor: string | null;
}

/**
 * Per-key flow control counted by the store. A holder is a string the runner makes (an attempt of
 * a task, or an instance); every call is idempotent per holder. Leases: a holder's slot counts
 * until its `until`; after that the slot is free again whatever happened to the holder.
 */
export interface FlowStore {
  /**
   * True when the store's `save` takes `SaveOptions.flow` ({@link SaveFlow}): holders acquired and
   * released in the write that saves, one round trip, all or nothing. Absent: the runner calls
   * `acquire` before the save and `release` after it (a wrapper that does not pass
   * `SaveOptions.flow` on must not copy it).
   */
  readonly inSave?: boolean | undefined;
  /**
   * True when the store's `create` takes `CreateOptions.flow` ({@link CreateFlow}): the create's
   * instance written and its holder acquired in one write, all or nothing. Absent: the runner calls
   * `acquire` before the create. The store confirms each take (`CreateFlow.taken`), so a wrapper
   * that copies this flag but not the option costs the runner an `acquire` after the create, not
   * the take.
   */
  readonly inCreate?: boolean | undefined;
  /**
   * Takes every need for `holder` at once or none (all-or-nothing): a slot while fewer than `limit`
   * unlapsed holders hold its key, a start while fewer than `limit` starts fell in the last
   * `periodMs`. Granted: the holder holds each slot until `until` (an existing hold is renewed;
   * a rate start is recorded at `now`) and its waiter entries are removed. Not granted: nothing is
   * taken, and `holder` is recorded as waiting on the unmet key for `instance` (kept once, with the
   * time it first waited).
   */
  acquire(
    holder: string,
    instance: string,
    needs: readonly FlowNeed[],
    now: number,
    until: number,
  ): Promise<FlowGrant>;
  /**
   * Ends the holds (and waiter entries) of `holders`; unknown holders are ignored. Resolves with
   * the instances that were waiting, oldest first, on the keys that gained a free slot (at most
   * as many per key as slots became free): the caller wakes them.
   *
   * `counters`, when given, names every counter on which `holders` hold or wait (the needs they
   * were granted, the need a waiter was refused): a store may look for them there only, so an
   * entry on a counter left out stays (a task's until its lease lapses, an instance's for good).
   * Without it the store finds the counters itself, which may cost more (on PostgreSQL a scan of
   * every counter). The runner always names them; so should a caller that knows them.
   */
  release(holders: readonly string[], now: number, counters?: readonly FlowCounterRef[]): Promise<string[]>;
  /**
   * Moves the lease of each of `holders`' held slots to `until` (a renewal); unknown holders are
   * ignored. `counters`: where they hold, as {@link release} takes them.
   */
  renew(holders: readonly string[], until: number, counters?: readonly FlowCounterRef[]): Promise<void>;
  /** Keys with holders or waiters, ordered by scope then key, paged by cursor. */
  list(query: {
    scope?: string | undefined;
    limit: number;
    cursor?: string | null | undefined;
    now: number;
  }): Promise<FlowKeyPage>;
}
