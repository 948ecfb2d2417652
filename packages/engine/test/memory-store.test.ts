import { createMemoryStore, type MemoryStore } from '@stepfold/engine';
import { runStoreConformance } from '@stepfold/engine/conformance';

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
