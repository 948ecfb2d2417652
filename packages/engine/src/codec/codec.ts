import { StepfoldError } from '../errors.js';

// The codec contract: one JSON value in, one marked envelope out, and back. A codec is a value the
// user holds (keys and all); the runner only ever calls these two methods.

/**
 * An encoded value as it is stored: `$enc` names the codec's format, `kid` the key it was encoded
 * with (so a rotated key still decodes what it wrote), the other string fields are the codec's own
 * (an IV and ciphertext, for {@link aesGcmCodec}).
 */
export interface Encoded {
  readonly $enc: string;
  readonly kid: string;
  readonly [field: string]: string;
}

/**
 * Encodes and decodes the JSON values of an instance (input, outputs, signal data, offloaded
 * bodies). Implement it for your own scheme (a KMS, envelope keys) and pass it through
 * {@link defineCodec}; `aesGcmCodec` is the built-in one.
 */
export interface Codec {
  /** The envelope of `value` (any JSON value), under the codec's current key. */
  encode(value: unknown): Promise<Encoded>;
  /**
   * The value `encoded` holds: `CODEC_KEY_MISSING` if its key id is not one the codec holds,
   * `CODEC_DECRYPT_FAILED` if it does not decrypt (a wrong key, tampered text).
   */
  decode(encoded: Encoded): Promise<unknown>;
}

/** Codes of {@link CodecError}. */
export type CodecErrorCode = 'CODEC_KEY_MISSING' | 'CODEC_DECRYPT_FAILED';

/** A value the codec cannot decode (its key is not held, or it does not decrypt); nothing was written. */
export class CodecError extends StepfoldError<CodecErrorCode> {
  constructor(
    code: CodecErrorCode,
    /** The key id the value names. */
    readonly kid: string,
    message: string,
    cause?: unknown,
  ) {
    super(code, message, { retryable: false, cause });
  }
}

/** Whether `v` is an {@link Encoded} envelope: an object whose `$enc` and `kid` are strings. */
export function isEncoded(v: unknown): v is Encoded {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as Encoded).$enc === 'string' &&
    typeof (v as Encoded).kid === 'string' &&
    !Array.isArray(v)
  );
}

/** The marker tools show for an envelope they cannot decode: `[encrypted k2]`. */
export function encryptedMarker(e: Encoded): string {
  return `[encrypted ${e.kid}]`;
}
