import { defineStore, type Store } from '@stepfold/engine';
import { runEncryptionConformance } from '@stepfold/engine/conformance';
import { memoryDriver } from '../src/store/memory-driver.js';
import { emptyRows, type MemoryRows } from '../src/store/memory-rows.js';

// The memory store's rows as text: every encoded snapshot and every signal waiting in an inbox.
const rowsOf = new WeakMap<Store, MemoryRows>();

runEncryptionConformance({
  name: 'memory',
  createStore() {
    const m = emptyRows();
    const store = defineStore(
      { name: 'memory', isUnavailable: () => false, sizes: { asked: undefined, fallback: 1024 * 1024 } },
      memoryDriver(m),
    );
    rowsOf.set(store, m);
    return store;
  },
  async rawText(store) {
    const rows = [...(rowsOf.get(store)?.rows.values() ?? [])];
    return rows.flatMap((r) => [r.encoded.json, ...r.sent.map((w) => w.json)]).join('\n');
  },
});
