export { createDynamoStore, DEFAULT_TABLE, type DynamoStoreOptions } from './dynamo-store.js';
export { DEFAULT_MAX_SNAPSHOT_BYTES, DYNAMO_ITEM_LIMIT } from './encode.js';
export {
  DUE_INDEX,
  type EnsureTableOptions,
  ensureTable,
  LIST_INDEX,
  STATUS_INDEX,
  tableDefinition,
  WORKFLOW_INDEX,
} from './setup.js';
