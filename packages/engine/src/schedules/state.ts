import type { ScheduleSpec } from './spec.js';

// The schedule instance's input: everything it knows, carried from run to run by continueAsNew.
// Bounded: counters and the last few runs and skips, never a list that grows with time.

/** How many recent runs and skips a schedule keeps. */
export const RECENT_LIMIT = 10;

/** Why a slot was not started. */
export type SkipReason = 'overlap' | 'catchup' | 'paused' | 'invalid';

/** A run the schedule started. */
export interface RunRecord {
  /** The target instance's id. */
  id: string;
  /** The slot it was started for (absent for a trigger-now). */
  slot?: number;
  /** When the schedule started it (the fire's time). */
  at: number;
  how: 'slot' | 'trigger' | 'backfill';
}

/** A slot the schedule decided not to start. */
export interface SkipRecord {
  slot: number;
  reason: SkipReason;
}

/** Counters since the schedule was created. */
export interface ScheduleCounts {
  /** Slots started (a slot whose run already existed counts: it was started once). */
  started: number;
  /** Slots skipped, all reasons together (see `skippedBy`). */
  skipped: number;
  /** Runs started by trigger-now. */
  triggered: number;
  /** Runs a backfill started (slots of its range not started before). */
  backfilled: number;
}

/** The schedule instance's input (and its fire handler's output): its spec and where it stands. */
export interface ScheduleState {
  spec: ScheduleSpec;
  paused: boolean;
  /** Free text set with pause or create (why it is paused, who owns it). */
  note?: string;
  /** Every slot at or before this time has been decided (started, buffered or skipped). */
  cursor: number;
  /** The latest slot decided. */
  lastSlot?: number;
  /** The next slot to come (absent when paused, or when none is left before `endAt`). */
  nextSlot?: number;
  /** When the schedule wakes next: the next slot, or sooner while a buffered slot waits. Absent: only a command wakes it. */
  wakeAt?: number;
  /** A slot held (overlap `bufferOne`) until the run before it finishes. */
  buffered?: number;
  /** The id of the run started last by a slot or a trigger: the run the overlap policy looks at. */
  lastRun?: string;
  counts: ScheduleCounts;
  skippedBy: Record<SkipReason, number>;
  /** Newest first, at most {@link RECENT_LIMIT}. */
  recent: RunRecord[];
  /** Newest first, at most {@link RECENT_LIMIT}. */
  skips: SkipRecord[];
  /** The last error a start met that was not worth retrying (a slot skipped as `invalid`). */
  lastError?: string;
  createdAt: number;
}

/** A command sent to a schedule (the payload of its `control` signal); `at` is when it was sent. */
export type ScheduleCommand =
  | { op: 'pause'; note?: string; at?: number }
  | { op: 'resume'; catchup?: boolean }
  | { op: 'trigger'; runId: string; at?: number }
  | { op: 'backfill'; from: number; to: number };

/** The state of a schedule just created at `now`: nothing decided before it (or before `startAt`). */
export function initialState(spec: ScheduleSpec, now: number, paused: boolean, note?: string): ScheduleState {
  const from = Math.max(now, spec.startAt ?? now);
  return {
    spec,
    paused,
    ...(note === undefined ? {} : { note }),
    // A slot exactly at creation time still fires.
    cursor: from - 1,
    counts: { started: 0, skipped: 0, triggered: 0, backfilled: 0 },
    skippedBy: { overlap: 0, catchup: 0, paused: 0, invalid: 0 },
    recent: [],
    skips: [],
    createdAt: now,
  };
}

/** Adds `item` first and keeps the newest {@link RECENT_LIMIT}. */
export function pushRecent<T>(list: T[], item: T): void {
  list.unshift(item);
  list.length = Math.min(list.length, RECENT_LIMIT);
}
