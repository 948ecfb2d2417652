// `@stepfold/engine`: the payload store contract, the kit adapters build theirs from, the
// memory reference, and offloading for a runner with the tools around it.

export { sha256Hex } from '../content-hash.js';
export { isPayloadRef, PAYLOAD_REF, type PayloadRef } from '../payload-ref.js';
export type { PayloadPort, RunnerPayloads } from '../runner/payload-port.js';
export { type CollectOptions, collectPayloads, deleteInstance } from './collect.js';
export {
  assertPayloadHash,
  DEFAULT_MAX_PAYLOAD_BYTES,
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
export { defaultThreshold, type Offloading, type OffloadingOptions, offloading } from './offloading.js';
export type { PayloadBody, PayloadDriver, PayloadStoreDefinition } from './payload-driver.js';
export { PayloadNotFoundError, PayloadTooLargeError } from './payload-errors.js';
export type { PayloadPage, PayloadStore } from './payload-store.js';
export { fetchPayload, hasPayloadRefs, payloadRefs, resolvePayloads } from './payload-walk.js';
