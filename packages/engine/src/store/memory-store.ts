import { type DefinedStore, defineStore } from './define-store.js';
import { memoryDriver } from './memory-driver.js';
import { emptyRows } from './memory-rows.js';

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /** Size limit in bytes of a serialized snapshot (default 1 MiB). */
  maxSnapshotBytes?: number | undefined;
  /** How long ids returned by `listDue` stay claimed, against its `now` (default 30 000 ms). */
  claimMs?: number | undefined;
}

/** The in-memory store, plus a switch that makes it behave like an unreachable server (for tests). */
export interface MemoryStore extends DefinedStore {
  /** While false, every call fails with `StoreUnavailableError`, as a database that went away. */
  setAvailable(available: boolean): void;
}

/**
 * An embedded store with the exact conditional-write semantics of the database adapters, and every
 * capability (claims with tokens, the inbox, wakes, flow): the TypeScript reference of the store protocol.
 * Rows are kept as JSON strings, so callers never share objects with the store.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const m = emptyRows();
  // The switch throws StoreUnavailableError itself: no driver error means "unavailable".
  const store = defineStore(
    {
      name: 'memory',
      isUnavailable: () => false,
      sizes: { asked: options.maxSnapshotBytes, fallback: 1024 * 1024, most: Number.MAX_SAFE_INTEGER },
      claimMs: options.claimMs,
    },
    memoryDriver(m),
  );
  return Object.assign(store, {
    setAvailable(value: boolean) {
      m.available = value;
    },
  });
}
