import { isTerminal, type Snapshot, type Status } from '../snapshot.js';
import { CONTROL_SIGNAL, SCHEDULE_WORKFLOW } from './definition.js';
import type { OverlapPolicy } from './spec.js';
import type { RunRecord, ScheduleCounts, ScheduleState, SkipReason, SkipRecord } from './state.js';

/** Where a schedule stands: `active`, `paused`, `ended` (no slot left), `dlq` (its fire kept failing: requeue it). */
export type ScheduleStatus = 'active' | 'paused' | 'ended' | 'dlq' | 'deleted';

/** A schedule as `list` and `describe` show it (read from its instance: the state its current loop started with). */
export interface ScheduleInfo {
  id: string;
  /** The target workflow. */
  workflow: string;
  version?: number | undefined;
  cron?: string | undefined;
  timeZone?: string | undefined;
  everyMs?: number | undefined;
  startAt?: number | undefined;
  endAt?: number | undefined;
  overlap: OverlapPolicy;
  catchupWindowMs: number;
  status: ScheduleStatus;
  paused: boolean;
  note?: string | undefined;
  /** The next slot to come, or null (paused, ended). */
  nextSlot: number | null;
  /** The latest slot decided (started, buffered or skipped), or null. */
  lastSlot: number | null;
  /** A slot buffered (`bufferOne`) until the previous run finishes, or null. */
  buffered: number | null;
  counts: ScheduleCounts;
  skippedBy: Record<SkipReason, number>;
  /** The latest runs started, newest first. */
  recent: RunRecord[];
  /** The latest slots skipped, newest first. */
  skips: SkipRecord[];
  lastError?: string | undefined;
  /** Why the schedule is parked (`status: 'dlq'`): the error its fire kept failing with. Fix that, then requeue it. */
  dlqError?: { message: string; code?: string | undefined } | undefined;
  /** Commands written and not yet applied by a worker. */
  pendingCommands: number;
  createdAt: number;
  /** The schedule instance's snapshot version and last write. */
  instanceVersion: number;
  updatedAt: number;
}

/** {@link ScheduleInfo} with the status of each recent run, as `describe` gives it. */
export interface ScheduleDescription extends ScheduleInfo {
  runs: Array<RunRecord & { status: Status | 'deleted' }>;
}

/** Whether a snapshot is a schedule's instance. */
export function isSchedule(s: Snapshot | null): s is Snapshot {
  return s !== null && s.workflow.name === SCHEDULE_WORKFLOW;
}

function statusOf(s: Snapshot, state: ScheduleState): ScheduleStatus {
  if (s.status === 'dlq') return 'dlq';
  if (isTerminal(s.status)) return 'deleted';
  if (state.paused) return 'paused';
  return state.wakeAt === undefined && state.nextSlot === undefined ? 'ended' : 'active';
}

/** The error that parked a schedule in dlq: its fire's, as the instance recorded it. */
function dlqError(s: Snapshot): ScheduleInfo['dlqError'] {
  const e = s.error;
  if (!e) return undefined;
  return e.code === undefined ? { message: e.message } : { message: e.message, code: e.code };
}

/** A schedule instance's snapshot as a {@link ScheduleInfo}. */
export function scheduleInfo(s: Snapshot): ScheduleInfo {
  const state = s.input as ScheduleState;
  const { spec } = state;
  const applying =
    s.steps['command']?.status === 'completed' || s.steps['idle']?.status === 'completed' ? 1 : 0;
  return {
    id: s.id,
    workflow: spec.workflow,
    version: spec.version,
    cron: spec.cron,
    timeZone: spec.cron === undefined ? undefined : (spec.timeZone ?? 'UTC'),
    everyMs: spec.everyMs,
    startAt: spec.startAt,
    endAt: spec.endAt,
    overlap: spec.overlap,
    catchupWindowMs: spec.catchupWindowMs,
    status: statusOf(s, state),
    paused: state.paused,
    note: state.note,
    nextSlot: state.nextSlot ?? null,
    lastSlot: state.lastSlot ?? null,
    buffered: state.buffered ?? null,
    counts: state.counts,
    skippedBy: state.skippedBy,
    recent: state.recent,
    skips: state.skips,
    lastError: state.lastError,
    dlqError: s.status === 'dlq' ? dlqError(s) : undefined,
    pendingCommands: s.inbox.filter((i) => i.name === CONTROL_SIGNAL).length + applying,
    createdAt: state.createdAt,
    instanceVersion: s.version,
    updatedAt: s.updatedAt,
  };
}
