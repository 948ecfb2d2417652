import type { Store } from '@stepfold/engine';
import { runStoreConformance } from '@stepfold/engine/conformance';
import { createMongoStore } from '../src/index.js';
import { outageServer, testClient } from './server.js';

const client = testClient();
const db = client.db('stepfold_conformance');
const collections = new Map<Store, string>();
let counter = 0;

// A second FerretDB that only the outage test uses.
const outage = await outageServer('STEPFOLD_MONGO_OUTAGE_PORT', client);

runStoreConformance({
  name: 'mongo (FerretDB)',
  // No wakes: FerretDB has no change streams, so the inbox part runs with polling workers.
  capabilities: ['claims', 'flow', 'inbox', 'stream'],
  // Due work comes back earliest first whatever the fairness keys (not round-robin yet).
  fairness: false,
  createStore() {
    const collection = `c_${process.pid}_${++counter}`;
    const store = createMongoStore({ db, collection });
    collections.set(store, collection);
    return store;
  },
  // The flow races: a second store object on the same collections.
  reopen: (store) => createMongoStore({ db, collection: collections.get(store)! }),
  async destroyStore(store) {
    const name = collections.get(store) ?? '';
    await db.dropCollection(name).catch(() => {});
    await db.dropCollection(`${name}_flow`).catch(() => {});
    await db.dropCollection(`${name}_stream`).catch(() => {});
  },
  // Torn text behind the store's back: the document's snapshot, or each waiting signal's event.
  async corrupt(store, id, what) {
    const c = db.collection<{ _id: string; sent?: Record<string, unknown> }>(collections.get(store) ?? '');
    if (what === 'snapshot') {
      await c.updateOne({ _id: id }, { $set: { snapshot: '{"id": "torn' } });
      return;
    }
    const doc = await c.findOne({ _id: id });
    const torn = Object.keys(doc?.sent ?? {}).map((k) => [`sent.${k}.e`, '{"type": "sig']);
    await c.updateOne({ _id: id }, { $set: Object.fromEntries(torn) });
  },
  outage: {
    createStore: () =>
      createMongoStore({ db: outage.client.db('stepfold_outage'), collection: `o_${process.pid}` }),
    stop: outage.stop,
    start: outage.start,
  },
});
