import { createMemoryStore, defineStore, type MemoryStore, type Store } from '@stepfold/engine';
import { runStoreConformance } from '@stepfold/engine/conformance';
import { memoryDriver } from '../src/store/memory-driver.js';
import { emptyRows, type MemoryRows } from '../src/store/memory-rows.js';

// The memory store's rows, for spoiling one as a torn write would: the same store as
// `createMemoryStore` makes, over a record this file keeps.
const rowsOf = new WeakMap<Store, MemoryRows>();
function openedMemoryStore(): Store {
  const m = emptyRows();
  const store = defineStore(
    {
      name: 'memory',
      isUnavailable: () => false,
      sizes: { asked: undefined, fallback: 1024 * 1024, most: 2 ** 53 - 1 },
    },
    memoryDriver(m),
  );
  rowsOf.set(store, m);
  return store;
}

// The embedded default store passes the same suite as the database adapters; its outage is a switch.
runStoreConformance({
  name: 'memory',
  createStore: () => createMemoryStore(),
  capabilities: ['claims', 'inbox', 'wakes', 'flow'],
  outage: {
    createStore: () => createMemoryStore(),
    stop: async (store) => (store as MemoryStore).setAvailable(false),
    start: async (store) => (store as MemoryStore).setAvailable(true),
  },
});

runStoreConformance({
  name: 'memory (64 KiB limit)',
  createStore: () => createMemoryStore({ maxSnapshotBytes: 64 * 1024 }),
  capabilities: ['claims', 'inbox', 'wakes', 'flow'],
  writers: 4,
  rounds: 20,
});

runStoreConformance({
  name: 'memory (rows spoiled behind its back)',
  createStore: openedMemoryStore,
  capabilities: ['claims', 'inbox', 'wakes', 'flow'],
  writers: 2,
  rounds: 5,
  async corrupt(store, id, what) {
    const row = rowsOf.get(store)?.rows.get(id);
    if (!row) throw new Error(`no row ${id}`);
    if (what === 'snapshot') row.encoded = { ...row.encoded, json: '{"id": "torn' };
    else for (const w of row.sent) w.json = '{"type": "sig';
  },
});
