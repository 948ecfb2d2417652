import { createMemoryPayloadStore, type MemoryPayloadStore } from '@stepfold/engine';
import { runPayloadStoreConformance } from '@stepfold/engine/conformance';

// The reference runs the whole payload suite, outage included (its switch stands for the server).
runPayloadStoreConformance({
  name: 'memory',
  createStore: () => createMemoryPayloadStore(),
  outage: {
    createStore: () => createMemoryPayloadStore(),
    stop: async (store) => (store as MemoryPayloadStore).setAvailable(false),
    start: async (store) => (store as MemoryPayloadStore).setAvailable(true),
  },
});
