// `@stepfold/engine/payloads`: the payload store contract, the kit adapters build theirs from, and
// the memory reference; kept out of the main entry (Workers bundle it only when they offload).

export { sha256Hex } from '../content-hash.js';
export { isPayloadRef, PAYLOAD_REF, type PayloadRef } from '../payload-ref.js';
export {
  assertPayloadHash,
  definePayloadStore,
  MAX_PAYLOAD_PAGE,
  payloadSizeLimit,
} from './define-payload-store.js';
export {
  createMemoryPayloadStore,
  MEMORY_MAX_PAYLOAD_BYTES,
  type MemoryPayloadStore,
  type MemoryPayloadStoreOptions,
} from './memory-payload-store.js';
export type { PayloadBody, PayloadDriver, PayloadStoreDefinition } from './payload-driver.js';
export type { PayloadPage, PayloadStore } from './payload-store.js';
