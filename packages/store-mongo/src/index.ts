export {
  createMongoStore,
  DEFAULT_COLLECTION,
  DEFAULT_MAX_SNAPSHOT_BYTES,
  type MongoStoreOptions,
} from './mongo-store.js';
export { INSTANCE_INDEXES, type InstanceDocument } from './schema.js';
