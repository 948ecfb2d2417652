// The schedules entry, `@stepfold/engine/schedules`: its own entry because it carries croner (the
// cron evaluator), a dependency a per-event Worker that only steps instances never needs.

export {
  CONTROL_SIGNAL,
  FIRE_HANDLER,
  type FireHandler,
  SCHEDULE_WORKFLOW,
  type ScheduleHandlers,
  scheduleWorkflow,
} from './definition.js';
export { MAX_BACKFILL_SLOTS, MAX_SLOTS_PER_FIRE } from './fire.js';
export {
  isSchedule,
  type ScheduleDescription,
  type ScheduleInfo,
  type ScheduleStatus,
  scheduleInfo,
} from './info.js';
export {
  type CreateScheduleOptions,
  createSchedules,
  type ScheduleInput,
  type Schedules,
  type SchedulesOptions,
  type ScheduleTiming,
} from './schedules.js';
export {
  DEFAULT_CATCHUP_WINDOW_MS,
  DEFAULT_OVERLAP_CHECK_MS,
  MAX_SCHEDULE_ID_LENGTH,
  MIN_INTERVAL_MS,
  manualRunId,
  OVERLAP_POLICIES,
  type OverlapPolicy,
  type ScheduleSpec,
  slotRunId,
  slotSource,
} from './spec.js';
export type {
  RunRecord,
  ScheduleCommand,
  ScheduleCounts,
  ScheduleState,
  SkipReason,
  SkipRecord,
} from './state.js';
