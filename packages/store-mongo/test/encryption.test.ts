import type { Store } from '@stepfold/engine';
import { runEncryptionConformance } from '@stepfold/engine/conformance';
import { afterAll, beforeAll } from 'vitest';
import { createMongoPayloadStore, createMongoStore, type MongoPayloadStore } from '../src/index.js';
import { requireServer, testClient } from './server.js';

// Encryption at rest: every document of the store's collections (instances with their inboxes,
// flow, streams) and of its payload collection, read straight from the server, holds no plaintext.
const client = testClient();
const db = client.db('stepfold_encryption');
const collections = new Map<Store, string>();
let counter = 0;
beforeAll(() => requireServer(client));
afterAll(() => client.close());

/** Every document of every collection named `name` or `name_…`, as JSON text. */
async function collectionsText(name: string): Promise<string> {
  const names = (await db.listCollections({}, { nameOnly: true }).toArray())
    .map((c) => c.name)
    .filter((n) => n === name || n.startsWith(`${name}_`));
  const texts = await Promise.all(
    names.map(async (n) => JSON.stringify(await db.collection(n).find().toArray())),
  );
  return texts.join('\n');
}

runEncryptionConformance({
  name: 'mongo (FerretDB)',
  createStore() {
    const collection = `enc_${process.pid}_${++counter}`;
    const store = createMongoStore({ db, collection });
    collections.set(store, collection);
    return store;
  },
  async destroyStore(store) {
    const name = collections.get(store) ?? '';
    for (const n of [name, `${name}_flow`, `${name}_stream`]) await db.dropCollection(n).catch(() => {});
  },
  rawText: (store) => collectionsText(collections.get(store)!),
  createPayloadStore: () => createMongoPayloadStore({ db, collection: `encp_${process.pid}_${++counter}` }),
  async rawPayloadText(p) {
    const { collection } = p as MongoPayloadStore;
    const text = await collectionsText(collection);
    await db.dropCollection(collection).catch(() => {});
    return text;
  },
});
