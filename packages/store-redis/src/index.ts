export {
  ALL,
  assertPrefix,
  DEFAULT_PREFIX,
  DUE,
  hasHashTag,
  INSTANCE,
  type Keys,
  keysFor,
  MAX_PREFIX_LENGTH,
  STATUS,
  STATUS_WORKFLOW,
  WORKFLOW,
} from './keys.js';
export { isUnavailable } from './map-error.js';
export {
  createRedisStore,
  DEFAULT_MAX_SNAPSHOT_BYTES,
  MAX_SNAPSHOT_BYTES_LIMIT,
  type RedisStoreOptions,
} from './redis-store.js';
export { SCRIPTS, type Script } from './scripts.js';
