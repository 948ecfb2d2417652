import { StoreUnavailableError } from '../errors.js';
import { DEFAULT_MAX_PAYLOAD_BYTES, definePayloadStore } from './define-payload-store.js';
import type { PayloadStore } from './payload-store.js';

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

/** Default body limit of the memory payload store: the kit's 16 MiB, what every server adapter holds too. */
export const MEMORY_MAX_PAYLOAD_BYTES = DEFAULT_MAX_PAYLOAD_BYTES;

/**
 * A payload store in this process's memory: the reference of the payload store contract, for tests
 * and for the harness. Built on {@link definePayloadStore} like the server adapters, so it checks
 * (and refuses) exactly what they do.
 *
 * @example
 * const payloads = createMemoryPayloadStore();
 * await payloads.put('order-1', sha256Hex(json), json);
 */
export function createMemoryPayloadStore(options: MemoryPayloadStoreOptions = {}): MemoryPayloadStore {
  const owners = new Map<string, Map<string, string>>();
  let available = true;
  // Raised by the driver while switched off; the kit maps it like a refused connection.
  const down = new StoreUnavailableError('memory payload store is unavailable');
  const up = async () => {
    if (!available) throw down;
  };
  return definePayloadStore(
    {
      name: 'memory payloads',
      isUnavailable: (e) => e === down,
      sizes: { asked: options.maxPayloadBytes, fallback: MEMORY_MAX_PAYLOAD_BYTES, most: 2 ** 30 },
    },
    {
      setup: up,
      async put({ owner, sha256, body }) {
        await up();
        const of = owners.get(owner) ?? new Map<string, string>();
        if (!of.has(sha256)) of.set(sha256, body);
        owners.set(owner, of);
      },
      async get(owner, sha256) {
        await up();
        return owners.get(owner)?.get(sha256) ?? null;
      },
      async list(owner, after, limit) {
        await up();
        const all = [...(owners.get(owner)?.keys() ?? [])].sort();
        return all.filter((h) => after === null || h > after).slice(0, limit);
      },
      async delete(owner, sha256s) {
        await up();
        const of = owners.get(owner);
        let n = 0;
        for (const h of sha256s) if (of?.delete(h)) n++;
        if (of?.size === 0) owners.delete(owner);
        return n;
      },
      async deleteOwner(owner) {
        await up();
        const n = owners.get(owner)?.size ?? 0;
        owners.delete(owner);
        return n;
      },
    },
    {
      setAvailable(a: boolean) {
        available = a;
      },
      get size() {
        let n = 0;
        for (const of of owners.values()) n += of.size;
        return n;
      },
    },
  );
}
