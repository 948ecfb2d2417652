import { StoreUnavailableError, ValidationError } from '../errors.js';
import { assertValidId } from '../ids.js';
import { snapshotBytes } from '../store/store.js';
import { PayloadTooLargeError } from './payload-errors.js';
import type { PayloadPage, PayloadStore } from './payload-store.js';

/** Options of {@link createMemoryPayloadStore}. */
export interface MemoryPayloadStoreOptions {
  /** Largest body accepted, in UTF-8 bytes (default 16 MiB). */
  maxPayloadBytes?: number | undefined;
}

/** The in-memory payload store, plus a switch that makes it behave like an unreachable server. */
export interface MemoryPayloadStore extends PayloadStore {
  /** While false, every call fails with `StoreUnavailableError`. */
  setAvailable(available: boolean): void;
  /** How many payloads it holds, over all owners (for tests). */
  readonly size: number;
}

const HASH = /^[0-9a-f]{64}$/;

/** Throws `INVALID_INPUT` unless `sha256` is 64 lowercase hex digits. */
export function assertPayloadHash(sha256: unknown): asserts sha256 is string {
  if (typeof sha256 !== 'string' || !HASH.test(sha256))
    throw new ValidationError('INVALID_INPUT', 'invalid payload hash', [
      { path: 'sha256', message: 'must be 64 lowercase hex digits' },
    ]);
}

/**
 * A payload store in this process's memory: the reference of the payload store contract, for tests
 * and for the harness.
 *
 * @example
 * const payloads = createMemoryPayloadStore();
 * await payloads.put('order-1', sha256Hex(json), json);
 */
export function createMemoryPayloadStore(options: MemoryPayloadStoreOptions = {}): MemoryPayloadStore {
  const maxPayloadBytes = options.maxPayloadBytes ?? 16 * 1024 * 1024;
  const owners = new Map<string, Map<string, string>>();
  let available = true;
  const up = () => {
    if (!available) throw new StoreUnavailableError('memory payload store is unavailable');
  };
  return {
    maxPayloadBytes,
    async setup() {
      up();
    },
    async put(owner, sha256, body) {
      assertValidId(owner, 'owner');
      assertPayloadHash(sha256);
      const bytes = snapshotBytes(body);
      if (bytes > maxPayloadBytes) throw new PayloadTooLargeError(owner, bytes, maxPayloadBytes);
      up();
      const of = owners.get(owner) ?? new Map<string, string>();
      if (!of.has(sha256)) of.set(sha256, body);
      owners.set(owner, of);
    },
    async get(owner, sha256) {
      assertValidId(owner, 'owner');
      assertPayloadHash(sha256);
      up();
      return owners.get(owner)?.get(sha256) ?? null;
    },
    async list(owner, page): Promise<PayloadPage> {
      assertValidId(owner, 'owner');
      if (!(Number.isSafeInteger(page.limit) && page.limit > 0))
        throw new RangeError('limit must be a positive integer');
      up();
      const all = [...(owners.get(owner)?.keys() ?? [])].sort();
      const from = page.cursor ? all.findIndex((h) => h > page.cursor!) : 0;
      const rest = from < 0 ? [] : all.slice(from);
      const items = rest.slice(0, page.limit);
      return { items, cursor: rest.length > page.limit ? items[items.length - 1]! : null };
    },
    async delete(owner, sha256s) {
      assertValidId(owner, 'owner');
      for (const h of sha256s) assertPayloadHash(h);
      up();
      const of = owners.get(owner);
      let n = 0;
      for (const h of sha256s) if (of?.delete(h)) n++;
      if (of && of.size === 0) owners.delete(owner);
      return n;
    },
    async deleteOwner(owner) {
      assertValidId(owner, 'owner');
      up();
      const n = owners.get(owner)?.size ?? 0;
      owners.delete(owner);
      return n;
    },
    async close() {},
    setAvailable(a) {
      available = a;
    },
    get size() {
      let n = 0;
      for (const of of owners.values()) n += of.size;
      return n;
    },
  };
}
