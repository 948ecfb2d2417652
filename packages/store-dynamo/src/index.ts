export { DEFAULT_CLAIM_MS } from '@stepfold/engine';
export { createDynamoStore, DEFAULT_TABLE, type DynamoStoreOptions } from './dynamo-store.js';
export {
  DEFAULT_DUE_SHARDS,
  DEFAULT_MAX_SNAPSHOT_BYTES,
  DYNAMO_ITEM_LIMIT,
  MAX_DUE_SHARDS,
  shardOf,
} from './encode.js';
export { FLOW_HOLDER_PREFIX, FLOW_KEY_PREFIX, FLOW_SHARD, flowKeyId } from './flow.js';
export { MAX_WAITING } from './inbox.js';
export {
  createDynamoPayloadStore,
  DEFAULT_MAX_PAYLOAD_BYTES,
  DEFAULT_PAYLOAD_TABLE,
  type DynamoPayloadStore,
  type DynamoPayloadStoreOptions,
  MAX_PAYLOAD_BYTES_LIMIT,
} from './payload-store.js';
export { PAYLOAD_CHUNK_BYTES, payloadTableDefinition } from './payload-table.js';
export { type ReshardDueOptions, type ReshardDueResult, reshardDue } from './reshard.js';
export {
  DUE_INDEX,
  type EnsureTableOptions,
  ensureTable,
  isWakeStream,
  LANE_INDEX,
  LIST_INDEX,
  SEARCH_INDEX,
  SENT_INDEX,
  STATUS_INDEX,
  type TableDefinitionOptions,
  tableDefinition,
  WAKE_STREAM,
  WORKFLOW_INDEX,
} from './setup.js';
export { SETTINGS_ID } from './shards.js';
export {
  type ImageValue,
  NOTE_ATTRIBUTE,
  NOTICE_SNAPSHOT_MAX_CHARS,
  type Note,
  noticeOfImage,
  type StreamImage,
  snapshotOfImage,
} from './stream-notice.js';
export {
  openStreamReader,
  type StreamReader,
  type StreamReaderOptions,
  type StreamRecord,
  type StreamsClient,
} from './stream-reader.js';
export { DEFAULT_STREAM_IDLE_MS, type DynamoStreamsOptions, STREAM_BACKOFF } from './streams.js';
export { WakeStreamError } from './wake-stream-error.js';
