import { ValidationError } from '../errors.js';
import type { RunnerCodec } from '../runner/codec-port.js';
import { type Codec, isEncoded } from './codec.js';
import { sealedStore } from './sealed-store.js';
import { Sealer } from './sealer.js';

/** A {@link Codec} a runner can take (`createRunner({ codec })`): what {@link defineCodec} and `aesGcmCodec` return. */
export interface SealingCodec extends Codec, RunnerCodec {}

/**
 * Makes a runner's `codec` option of your own {@link Codec}: the runner then encodes the input,
 * step outputs, signal data and offloaded payloads of every instance with it before the store sees
 * them, and decodes them on every read. Values that did not change since they were read or
 * written are not encoded again.
 *
 * @example
 * const codec = defineCodec({
 *   encode: async (value) => ({ $enc: 'kms', kid: 'k1', data: await kms.encrypt(JSON.stringify(value)) }),
 *   decode: async (e) => JSON.parse(await kms.decrypt(e.data!)),
 * });
 * const runner = createRunner({ store, workflows: [order], handlers, codec });
 */
export function defineCodec(codec: Codec): SealingCodec {
  if (typeof codec?.encode !== 'function' || typeof codec.decode !== 'function')
    throw new ValidationError('INVALID_OPTIONS', 'invalid codec', [
      { path: '', message: 'a codec has encode(value) and decode(encoded) methods' },
    ]);
  const sealer = new Sealer(codec);
  return {
    encode: (value) => codec.encode(value),
    decode: (encoded) => codec.decode(encoded),
    wrap: (store) => sealedStore(store, sealer),
    sealBody: async (json) => JSON.stringify(await codec.encode(json)),
    async openBody(body) {
      // A body stored before the codec was set is plain JSON: read as it is.
      if (!body.startsWith('{"$enc"')) return body;
      const envelope: unknown = JSON.parse(body);
      if (!isEncoded(envelope)) return body;
      const json = await codec.decode(envelope);
      if (typeof json !== 'string') throw new TypeError('an encoded payload body holds no JSON text');
      return json;
    },
  };
}
