import { ValidationError } from '../errors.js';
import { fromBase64, toBase64 } from './base64.js';
import { type Codec, CodecError, type Encoded } from './codec.js';
import { defineCodec, type SealingCodec } from './define-codec.js';

// AES-GCM through WebCrypto (`crypto.subtle`, a global on Node 20, Workers, Lambda and browsers):
// a fresh 96-bit IV per value, the key id bound in as additional data, so relabelling an envelope
// with another key id fails to decrypt.

/** The `$enc` of an {@link aesGcmCodec} envelope. */
export const AES_GCM = 'aes-gcm';

/** A key of {@link aesGcmCodec}: 16 or 32 raw bytes, the same as base64 text, or an AES-GCM `CryptoKey`. */
export type AesKey = Uint8Array | string | CryptoKey;

/** Options of {@link aesGcmCodec}. */
export interface AesGcmCodecOptions {
  /**
   * Keys by key id. New values are encoded with `current`; every key listed decodes, so a
   * rotated-out key stays listed until nothing stored names it.
   */
  keys: Readonly<Record<string, AesKey>>;
  /** The key id new values are encoded with (default: the only key; required when there are several). */
  current?: string | undefined;
}

/** The envelope {@link aesGcmCodec} writes: key id, IV and ciphertext (with its tag), base64. */
export interface AesGcmEncoded extends Encoded {
  readonly $enc: typeof AES_GCM;
  readonly iv: string;
  readonly ct: string;
}

const optionsError = (path: string, message: string) =>
  new ValidationError('INVALID_OPTIONS', 'invalid aesGcmCodec options', [{ path, message }]);

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Encrypts instance data at rest with AES-GCM (WebCrypto, so the same on Node, Workers and
 * Lambda). Pass it to `createRunner({ codec })`: input, step outputs, signal data and offloaded
 * payloads are encrypted before the store sees them; the reducer, conditions and data paths read
 * plaintext. Rotate by adding a key and making it `current`: older values still decode.
 *
 * @example
 * const codec = aesGcmCodec({ keys: { k2: process.env.DATA_KEY_2!, k1: process.env.DATA_KEY_1! }, current: 'k2' });
 * const runner = createRunner({ store, workflows: [order], handlers, codec });
 */
export function aesGcmCodec(options: AesGcmCodecOptions): SealingCodec {
  return defineCodec(aesGcm(options));
}

/** The bare {@link Codec} of {@link aesGcmCodec} (its options checked at once, keys imported on first use). */
function aesGcm(options: AesGcmCodecOptions): Codec {
  const ids = Object.keys(options?.keys ?? {});
  if (ids.length === 0) throw optionsError('keys', 'give at least one key');
  const current = options.current ?? (ids.length === 1 ? ids[0]! : undefined);
  if (current === undefined || !ids.includes(current))
    throw optionsError('current', `name the key new values are encoded with, one of ${ids.join(', ')}`);
  const material = new Map<string, Uint8Array | CryptoKey>();
  for (const id of ids) material.set(id, keyMaterial(id, options.keys[id]));
  const imported = new Map<string, Promise<CryptoKey>>();
  const key = (kid: string): Promise<CryptoKey> => {
    let k = imported.get(kid);
    if (!k) {
      const m = material.get(kid)!;
      k =
        m instanceof Uint8Array
          ? crypto.subtle.importKey('raw', m as BufferSource, 'AES-GCM', false, ['encrypt', 'decrypt'])
          : Promise.resolve(m);
      imported.set(kid, k);
    }
    return k;
  };
  return {
    async encode(value) {
      const json = JSON.stringify(value);
      if (json === undefined) throw new TypeError('a codec encodes JSON values, not undefined or functions');
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const ct = await crypto.subtle.encrypt(
        { name: 'AES-GCM', iv, additionalData: encoder.encode(current) },
        await key(current),
        encoder.encode(json),
      );
      const out: AesGcmEncoded = {
        $enc: AES_GCM,
        kid: current,
        iv: toBase64(iv),
        ct: toBase64(new Uint8Array(ct)),
      };
      return out;
    },
    async decode(encoded) {
      const { kid } = encoded;
      if (encoded.$enc !== AES_GCM)
        throw new CodecError('CODEC_DECRYPT_FAILED', kid, `not an ${AES_GCM} envelope: ${encoded.$enc}`);
      if (!material.has(kid))
        throw new CodecError(
          'CODEC_KEY_MISSING',
          kid,
          `no key ${JSON.stringify(kid)} to decrypt with (keys: ${ids.join(', ')})`,
        );
      const iv = fromBase64(encoded['iv'] ?? '');
      const ct = fromBase64(encoded['ct'] ?? '');
      const failed = (cause?: unknown) =>
        new CodecError(
          'CODEC_DECRYPT_FAILED',
          kid,
          `value encrypted with key ${JSON.stringify(kid)} does not decrypt (a wrong key, or altered text)`,
          cause,
        );
      if (iv?.length !== 12 || !ct) throw failed();
      let plain: ArrayBuffer;
      try {
        plain = await crypto.subtle.decrypt(
          { name: 'AES-GCM', iv: iv as BufferSource, additionalData: encoder.encode(kid) },
          await key(kid),
          ct as BufferSource,
        );
      } catch (e) {
        throw failed(e);
      }
      try {
        return JSON.parse(decoder.decode(plain));
      } catch (e) {
        throw failed(e);
      }
    },
  };
}

/** A key option checked: raw bytes or base64 of 16 or 32 bytes, or a `CryptoKey` for AES-GCM. */
function keyMaterial(id: string, raw: AesKey | undefined): Uint8Array | CryptoKey {
  if (typeof CryptoKey !== 'undefined' && raw instanceof CryptoKey) {
    if (raw.algorithm.name !== 'AES-GCM')
      throw optionsError(`keys.${id}`, `is a ${raw.algorithm.name} key, not an AES-GCM one`);
    return raw;
  }
  const bytes = typeof raw === 'string' ? fromBase64(raw) : raw;
  if (!(bytes instanceof Uint8Array) || (bytes.length !== 16 && bytes.length !== 32))
    throw optionsError(
      `keys.${id}`,
      'must be 16 or 32 bytes (raw, or as base64 text) or an AES-GCM CryptoKey',
    );
  return bytes;
}
