export { flowPrefixOf } from './flow.js';
export {
  ALL,
  assertPrefix,
  CLAIM_TOKEN,
  CLAIM_VERSION,
  CLAIM_WAKE,
  CLAIMS,
  DEFAULT_PREFIX,
  DUE,
  DUE_WORKFLOW,
  hasHashTag,
  INSTANCE,
  type Keys,
  keysFor,
  MAX_PREFIX_LENGTH,
  STATUS,
  STATUS_WORKFLOW,
  WAKE,
  WORKFLOW,
} from './keys.js';
export { isUnavailable } from './map-error.js';
export {
  createRedisPayloadStore,
  DEFAULT_MAX_PAYLOAD_BYTES,
  DEFAULT_PAYLOAD_PREFIX,
  MAX_PAYLOAD_BYTES_LIMIT,
  type RedisPayloadStore,
  type RedisPayloadStoreOptions,
} from './payload-store.js';
export {
  createRedisStore,
  DEFAULT_CLAIM_MS,
  DEFAULT_MAX_SKIPPED_CLAIMS,
  DEFAULT_MAX_SNAPSHOT_BYTES,
  MAX_SNAPSHOT_BYTES_LIMIT,
  type RedisStore,
  type RedisStoreOptions,
} from './redis-store.js';
export { SCRIPTS, type Script } from './scripts.js';
export { parseHint, WAKE_RETRY_MAX_MS, WAKE_RETRY_MIN_MS, wakeConnectionName } from './wakes.js';
