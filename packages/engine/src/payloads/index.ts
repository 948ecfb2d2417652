// `@stepfold/engine/payloads`: the payload store contract and its reference type, kept out of the
// main entry (Workers bundle it only when they offload).

export { isPayloadRef, PAYLOAD_REF, type PayloadRef } from '../payload-ref.js';
export {
  assertPayloadHash,
  createMemoryPayloadStore,
  type MemoryPayloadStore,
  type MemoryPayloadStoreOptions,
} from './memory-payload-store.js';
export { PayloadNotFoundError, PayloadTooLargeError } from './payload-errors.js';
export type { PayloadPage, PayloadStore } from './payload-store.js';
