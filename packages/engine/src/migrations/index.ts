// `@stepfold/engine/migrations`: moving in-flight instances to a new definition version. Its own
// entry: it carries immer (the data recipe), which the reducer's hot path never needs.
export { checkMigration, type MigrationReport, type StepMigrationReport } from './check.js';
export {
  defineMigration,
  type Migration,
  type MigrationContext,
  type MigrationData,
  type MigrationDefinition,
  type MigrationInput,
  type MigrationSpec,
  type StepMap,
} from './define.js';
export { type DryRunOptions, type DryRunProgress, type DryRunReport, dryRunMigration } from './dry-run.js';
export {
  type MigrateAllOptions,
  type MigrateAllProgress,
  type MigrateAllReport,
  type MigrateOptions,
  migrate,
  migrateAll,
} from './migrate.js';
export { MigrationRefusedError } from './migration-refused.js';
export { type MigrationPlan, type PlanOptions, planMigration } from './plan.js';
export type { ReasonCount } from './tally.js';
