// `@stepfold/engine/payloads`: the payload store contract and its reference type, offloading for a
// runner and the tools around it, kept out of the main entry (Workers bundle it only when they offload).

export { isPayloadRef, PAYLOAD_REF, type PayloadRef } from '../payload-ref.js';
export type { PayloadPort, RunnerPayloads } from '../runner/payload-port.js';
export { type CollectOptions, collectPayloads, deleteInstance } from './collect.js';
export {
  assertPayloadHash,
  createMemoryPayloadStore,
  type MemoryPayloadStore,
  type MemoryPayloadStoreOptions,
} from './memory-payload-store.js';
export { defaultThreshold, type Offloading, type OffloadingOptions, offloading } from './offloading.js';
export { PayloadNotFoundError, PayloadTooLargeError } from './payload-errors.js';
export type { PayloadPage, PayloadStore } from './payload-store.js';
export { fetchPayload, hasPayloadRefs, payloadRefs, resolvePayloads } from './payload-walk.js';
