export { DEFAULT_CLAIM_MS } from '@stepfold/engine/store-kit';
export type { InstanceDocument, WaitingSignal } from './encode.js';
export {
  createMongoStore,
  DEFAULT_COLLECTION,
  DEFAULT_MAX_SNAPSHOT_BYTES,
  type MongoStoreOptions,
} from './mongo-store.js';
export { INSTANCE_INDEXES } from './setup.js';
