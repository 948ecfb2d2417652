export {
  type ApiSettings,
  type EntryCode,
  FUNCTION_ROLES,
  type FunctionRole,
  type FunctionSettings,
  type PrebuiltCode,
  type QueueSettings,
  type StepfoldAppBaseProps,
  type StepfoldAppProps,
  type StreamSettings,
} from './props.js';
export { SCHEDULE_ACTIONS, TimerSchedules } from './scheduler.js';
export { API_ROUTES, STEPFOLD_APP_DEFAULTS, StepfoldApp, TABLE_ACTIONS } from './stepfold-app.js';
export { type StoreTableDefinition, type TableShape, tableShapeOf } from './table.js';
