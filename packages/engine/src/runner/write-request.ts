// What the runner asks of its write loop: one event for a stored instance, or one instance to
// create. Each is a single object, so a call site names what it sets and leaves the rest out.

import type { WorkflowDefinition } from '../definition/schema.js';
import type { WorkflowEvent } from '../events.js';
import type { Reduction } from '../reducer/reducer.js';
import type { LogEntry, ParentRef, ScheduledFor, Snapshot } from '../snapshot.js';
import type { SaveOptions, Store } from '../store/store.js';

/**
 * Called after each successful write with the snapshot written, the transitions it recorded, the
 * version the store held before (0 for a new instance: a write may span several versions), and
 * the wake time the instance had before it (null for a new one).
 */
export type OnWrite = (
  snapshot: Snapshot,
  transitions: readonly LogEntry[],
  before: number,
  dueAt: number | null,
) => void;

/** One reduction of a write's definition: `event` onto `s`, checked unless `trusted`. */
export type ReduceOne = (s: Snapshot, event: WorkflowEvent, trusted: boolean) => Reduction;

/**
 * What a worker's tick adds to a write from a snapshot it took (port.ts makes it): signals waiting
 * in the store's inbox applied first and consumed by the same write, a wake notice's snapshot the
 * save must find stored. A runner's own writes have none, and carry none of its code.
 */
export interface TakenWrite {
  /**
   * What a lost race counts as in `stats.lostRaces` (`sent`), when not the event's type. A write
   * with one is never re-applied: what it consumes was claimed for its base.
   */
  readonly race?: string | undefined;
  /** The write from the base as the loop got it: refused when the runner's own newer snapshot replaced it. */
  wrap(write: BasedWrite): BasedWrite;
  /** What applies before the event onto `current`: the snapshot the event applies to, the transitions so far, whether it is trusted now. */
  before(
    current: Snapshot,
    reduce: ReduceOne,
    trusted: boolean,
  ): { from: Snapshot; transitions: readonly LogEntry[]; trusted: boolean };
  /** The options of the save over `current`. */
  save(current: Snapshot): SaveOptions | undefined;
  /** Nothing applied to `current`: what is still to do (spent signals dropped from the inbox). */
  unchanged(current: Snapshot, store: Store): Promise<void>;
}

/** A snapshot a write starts from instead of loading one. */
export interface WriteBase {
  snapshot: Snapshot;
  /**
   * `reducer`: this runner's reducer made it, so it is applied to as is. `store`: the store handed
   * it out (a claim), so the reducer checks it as it checks a load. `notice`: a wake notice carried
   * it, so it is checked as a load and the write must also find exactly it (and the `sent` signals)
   * stored (`NOTICE_MISMATCH` otherwise, nothing written).
   */
  origin: 'reducer' | 'store' | 'notice';
}

/** One event to apply to a stored instance and save, conditional on the version it was applied to. */
export interface WriteRequest {
  id: string;
  /** The event at `now`, made again on each try (a re-apply after a conflict takes a new time); its type never depends on `now`. */
  event: (now: number) => WorkflowEvent;
  /** Told of the write, if there is one (an event the instance ignores writes nothing). */
  onWrite: OnWrite;
  /** Start from this snapshot, believed current, instead of loading (default: load). */
  base?: WriteBase | undefined;
  /** May refuse the event for the snapshot it would apply to (a signal's declared payload schema). */
  check?: ((current: Snapshot, definition: WorkflowDefinition) => Promise<void>) | undefined;
  /**
   * `reapply` (default): a lost race is reloaded and re-applied (up to the runner's
   * `conflictRetries`). `fail`: its VERSION_CONFLICT is thrown at once, with no reload.
   */
  onConflict?: 'reapply' | 'fail' | undefined;
  /** A worker's tick from a snapshot it took (see {@link TakenWrite}). */
  taken?: TakenWrite | undefined;
  /**
   * A handler's result, which may share its write with other results reported to the same
   * `onWrite` while an earlier write of the instance is in flight (a map's items finish in bursts).
   */
  merge?: boolean | undefined;
  /** Set by the write loop: results merged into this write, applied after `event` in order. */
  also?: readonly MergedEvent[] | undefined;
  /** Set by the write loop with `also`: told when the reducer refuses `event` itself (the rest is still written). */
  refused?: ((error: unknown) => void) | undefined;
}

/** A result merged into another request's write; `refused` is told if the reducer refuses it. */
export interface MergedEvent {
  event: (now: number) => WorkflowEvent;
  refused(error: unknown): void;
}

/** Which instance to create: a start message's fields (a start message is one). */
export interface NewInstance {
  workflow: string;
  id: string;
  input?: unknown;
  /** The version to start (default the newest registered). */
  version?: number | undefined;
  /** Start a finished instance of this id over; `ALREADY_EXISTS` if someone else changed it first. */
  reuseFinished?: boolean | undefined;
  /** The schedule slot the run is for (kept as `snapshot.schedule`). */
  schedule?: ScheduledFor | undefined;
  /** The run's priority, over its workflow's (kept as `snapshot.priority`). */
  priority?: number | undefined;
}

/**
 * One instance to create and start. What to create is `instance`, so a start message is passed as
 * it is; how to write it sits beside, where no field of a message can reach.
 */
export interface CreateRequest {
  instance: NewInstance;
  /** An event written in the same write, after the start (the signal of `startIfMissing`). */
  alsoApply?: WorkflowEvent | undefined;
  onWrite: OnWrite;
  /** The trace carrier the start event records (set by the tracing wrapper, inside its span). */
  trace?: Record<string, string> | undefined;
  /** The parent a child instance reports its end to (set by the runner's child effect only). */
  parent?: ParentRef | undefined;
  /** Skip the declared input check: a child created already ended, which runs nothing. */
  unchecked?: boolean | undefined;
}

/** Writes one event; resolves with the stored snapshot after it (the same one if the event did not apply). */
export type Write = (request: WriteRequest) => Promise<Snapshot>;

/** A write from `base` (which replaces the request's own: the newest snapshot this runner wrote of it). */
export type BasedWrite = (request: WriteRequest, base: WriteBase | undefined) => Promise<Snapshot>;

/** Creates one instance; resolves with the snapshot written. */
export type Create = (request: CreateRequest) => Promise<Snapshot>;
