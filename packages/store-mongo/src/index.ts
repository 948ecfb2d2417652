export { DEFAULT_CLAIM_MS } from '@stepfold/engine';
export type { InstanceDocument, WaitingSignal } from './encode.js';
export { FLOW_INDEXES, type FlowKeyDocument } from './flow.js';
export {
  createMongoStore,
  DEFAULT_COLLECTION,
  DEFAULT_MAX_SNAPSHOT_BYTES,
  type MongoStoreOptions,
} from './mongo-store.js';
export {
  createMongoPayloadStore,
  DEFAULT_MAX_PAYLOAD_BYTES,
  DEFAULT_PAYLOAD_COLLECTION,
  type MongoPayloadStore,
  type MongoPayloadStoreOptions,
  type PayloadDocument,
} from './payload-store.js';
export { INSTANCE_INDEXES } from './setup.js';
