import type { Codec, Encoded } from './codec.js';
import { encryptedMarker, isEncoded } from './codec.js';

/**
 * `value` (a snapshot, an event, any stored JSON) for a person to read: every envelope in it
 * decoded with `codec` where it holds the key, else replaced by its marker (`[encrypted k2]`), so a
 * tool without the key (or with an old one missing) still shows everything else. A value that
 * fails to decrypt shows `[encrypted k2: does not decrypt]`.
 *
 * @example
 * const s = readableSnapshot(await store.load('order-42'), codec);
 */
export async function readableSnapshot<T>(value: T, codec?: Codec | undefined): Promise<T> {
  return (await walk(value, codec)) as T;
}

async function walk(v: unknown, codec: Codec | undefined): Promise<unknown> {
  if (typeof v !== 'object' || v === null) return v;
  if (isEncoded(v)) return reveal(v, codec);
  if (Array.isArray(v)) return Promise.all(v.map((x) => walk(x, codec)));
  const entries = await Promise.all(
    Object.entries(v).map(async ([k, x]) => [k, await walk(x, codec)] as const),
  );
  // fromEntries defines own properties: a `__proto__` key stays data.
  return Object.fromEntries(entries);
}

async function reveal(e: Encoded, codec: Codec | undefined): Promise<unknown> {
  if (!codec) return encryptedMarker(e);
  try {
    return await codec.decode(e);
  } catch (err) {
    if ((err as { code?: unknown }).code === 'CODEC_DECRYPT_FAILED')
      return `${encryptedMarker(e).slice(0, -1)}: does not decrypt]`;
    return encryptedMarker(e);
  }
}

/**
 * `value` with every envelope in it replaced by its marker (`[encrypted k2]`), at once: what a tool
 * without the key shows. Objects without an envelope are returned as they are.
 *
 * @example
 * console.log(JSON.stringify(maskEncoded(await store.load('order-42'))));
 */
export function maskEncoded<T>(value: T): T {
  return mask(value) as T;
}

function mask(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (isEncoded(v)) return encryptedMarker(v);
  if (Array.isArray(v)) {
    const items = v.map(mask);
    return items.some((m, i) => m !== v[i]) ? items : v;
  }
  let out: Record<string, unknown> | undefined;
  for (const [k, x] of Object.entries(v)) {
    const m = mask(x);
    if (m === x) continue;
    out ??= { ...v };
    // defineProperty: a `__proto__` key stays data.
    Object.defineProperty(out, k, { value: m, enumerable: true, writable: true, configurable: true });
  }
  return out ?? v;
}
