// The claim lease every store defaults to (one rule, the engine's), re-exported under its old name.
export { DEFAULT_CLAIM_MS } from '@stepfold/engine';
export { type PostgresDueBacklogOptions, postgresDueBacklog } from './due-backlog.js';
export { needsTextColumn } from './encode.js';
export { isUnavailable } from './map-error.js';
export {
  createPostgresPayloadStore,
  DEFAULT_MAX_PAYLOAD_BYTES,
  MAX_PAYLOAD_BYTES_LIMIT,
  type PostgresPayloadStore,
  type PostgresPayloadStoreOptions,
} from './payload-store.js';
export { createPostgresStore } from './postgres-store.js';
export type { SnapshotColumn } from './save-many.js';
export {
  MIGRATIONS,
  MIGRATIONS_TABLE,
  type Migration,
  type PgNotification,
  type PgPool,
  type PgPoolClient,
  type PgQueryable,
} from './setup.js';
export {
  DEFAULT_MAX_SNAPSHOT_BYTES,
  GROUP_COMMIT_CHARS,
  GROUP_COMMIT_ROWS,
  MAX_SNAPSHOT_BYTES_LIMIT,
  type PostgresStore,
  type PostgresStoreOptions,
} from './store-options.js';
