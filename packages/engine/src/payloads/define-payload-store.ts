import { sha256Hex } from '../content-hash.js';
import { ValidationError } from '../errors.js';
import { assertValidId } from '../ids.js';
import { snapshotBytes } from '../store/store.js';
import { storeGuard } from '../store/store-kit.js';
import type { PayloadBody, PayloadDriver, PayloadStoreDefinition } from './payload-driver.js';
import { PayloadTooLargeError } from './payload-errors.js';
import type { PayloadPage, PayloadStore } from './payload-store.js';

/** The most hashes one `list` page returns, whatever the limit asked: a page is one bounded read. */
export const MAX_PAYLOAD_PAGE = 1000;

/** The body limit of a payload store whose adapter names no other default: 16 MiB. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 16 * 1024 * 1024;

const HASH = /^[0-9a-f]{64}$/;
// A lone surrogate has no UTF-8 form (each database would store a replacement character, so the
// body read back would not be the one written); a NUL does not fit PostgreSQL text. JSON text
// never holds either: JSON.stringify escapes both.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const invalid = (path: string, message: string, summary = 'invalid payload'): ValidationError =>
  new ValidationError('INVALID_INPUT', summary, [{ path, message }]);

/** Throws `INVALID_INPUT` unless `sha256` is 64 lowercase hex digits. */
export function assertPayloadHash(sha256: unknown, path = 'sha256'): asserts sha256 is string {
  if (typeof sha256 !== 'string' || !HASH.test(sha256))
    throw invalid(path, 'must be 64 lowercase hex digits', 'invalid payload hash');
}

/** The body size limit from what the user asked and what the database allows; a RangeError when out of 1..most. */
export function payloadSizeLimit(sizes: PayloadStoreDefinition['sizes']): number {
  const fallback = sizes.fallback ?? DEFAULT_MAX_PAYLOAD_BYTES;
  const most = sizes.most ?? fallback;
  const max = sizes.asked ?? fallback;
  if (!(Number.isSafeInteger(max) && max > 0 && max <= most))
    throw new RangeError(`maxPayloadBytes must be an integer in 1..${most}`);
  return max;
}

/**
 * Makes a {@link PayloadStore} from an adapter's narrow database calls: owners validated like ids
 * (`INVALID_ID`), hashes checked (`INVALID_INPUT`), each body checked against its hash and the size
 * limit (`PAYLOAD_TOO_LARGE`) before anything is sent, list pages checked and cut, and every driver
 * failure that means "server unreachable" turned into `STORE_UNAVAILABLE`. The adapter keeps only
 * its database calls; `own` are the fields it adds to the store (its table, its key names), copied
 * onto it as they are (getters stay getters).
 *
 * @example
 * export function createMyPayloadStore(o: { db: Db; table?: string; maxPayloadBytes?: number }) {
 *   const table = o.table ?? 'payloads';
 *   return definePayloadStore(
 *     { name: 'mydb payloads', isUnavailable: isNetworkError, sizes: { asked: o.maxPayloadBytes, most: 64 << 20 } },
 *     { setup, put, get, list, delete: remove, deleteOwner },
 *     { table },
 *   );
 * }
 */
export function definePayloadStore<Own extends object = Record<never, never>>(
  definition: PayloadStoreDefinition,
  driver: PayloadDriver,
  own?: Own,
): PayloadStore & NoInfer<Own> {
  const maxPayloadBytes = payloadSizeLimit(definition.sizes);
  const guard = storeGuard(definition.name, definition.isUnavailable);
  const owned = (owner: unknown): string => {
    assertValidId(owner, 'owner');
    return owner;
  };

  /** Every check of a put, cheapest first: nothing reaches the driver unless all pass. */
  const bodyOf = (owner: unknown, sha256: unknown, body: unknown): PayloadBody => {
    const o = owned(owner);
    assertPayloadHash(sha256);
    if (typeof body !== 'string') throw invalid('body', 'must be a string (JSON text)');
    const bytes = snapshotBytes(body);
    if (bytes > maxPayloadBytes) throw new PayloadTooLargeError(o, bytes, maxPayloadBytes);
    if (body.includes('\u0000')) throw invalid('body', 'must not contain NUL characters');
    if (LONE_SURROGATE.test(body)) throw invalid('body', 'must not contain lone surrogates');
    if (sha256Hex(body) !== sha256) throw invalid('sha256', 'is not the SHA-256 of the body');
    return { owner: o, sha256, body, bytes };
  };

  const store: PayloadStore = {
    maxPayloadBytes,
    setup: () => guard('setup', () => driver.setup()),
    async put(owner, sha256, body) {
      const payload = bodyOf(owner, sha256, body);
      await guard('put', () => driver.put(payload));
    },
    async get(owner, sha256) {
      const o = owned(owner);
      assertPayloadHash(sha256);
      return guard('get', () => driver.get(o, sha256));
    },
    async list(owner, page) {
      const o = owned(owner);
      const limit = page?.limit;
      if (!(Number.isSafeInteger(limit) && limit > 0))
        throw new RangeError('limit must be a positive integer');
      const cursor = page.cursor ?? null;
      if (cursor !== null) assertPayloadHash(cursor, 'cursor');
      const n = Math.min(limit, MAX_PAYLOAD_PAGE);
      const found = await guard('list', () => driver.list(o, cursor, n + 1));
      const items = found.slice(0, n);
      const result: PayloadPage = { items, cursor: found.length > n ? items[n - 1]! : null };
      return result;
    },
    async delete(owner, sha256s) {
      const o = owned(owner);
      if (!Array.isArray(sha256s)) throw new TypeError('delete: sha256s must be an array');
      sha256s.forEach((h, i) => assertPayloadHash(h, `sha256s[${i}]`));
      // Distinct hashes, so the count is of payloads removed, not of names given.
      const distinct = [...new Set(sha256s)];
      return distinct.length ? guard('delete', () => driver.delete(o, distinct)) : 0;
    },
    async deleteOwner(owner) {
      const o = owned(owner);
      return guard('deleteOwner', () => driver.deleteOwner(o));
    },
    close: async () => driver.close?.(),
  };
  return Object.defineProperties(store, Object.getOwnPropertyDescriptors(own ?? {})) as PayloadStore & Own;
}
