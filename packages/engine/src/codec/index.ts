// `@stepfold/engine`: encryption at rest as a runner value (`createRunner({ codec })`), and the
// reading side for tools that load snapshots themselves.

export type { RunnerCodec } from '../runner/codec-port.js';
export { AES_GCM, type AesGcmCodecOptions, type AesGcmEncoded, type AesKey, aesGcmCodec } from './aes-gcm.js';
export {
  type Codec,
  CodecError,
  type CodecErrorCode,
  type Encoded,
  encryptedMarker,
  isEncoded,
} from './codec.js';
export { defineCodec, type SealingCodec } from './define-codec.js';
export { maskEncoded, readableSnapshot } from './readable.js';
