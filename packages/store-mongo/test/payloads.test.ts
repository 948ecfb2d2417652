import { runPayloadStoreConformance } from '@stepfold/engine/conformance';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll } from 'vitest';
import { createMongoPayloadStore, type MongoPayloadStore } from '../src/index.js';
import { requireServer, services, testClient } from './server.js';

const client = testClient();
const db = client.db('stepfold_payloads');
let counter = 0;

// A FerretDB of its own for the outage test (not the instance store suite's), so stopping it
// disturbs no other test, whichever suites run at the same time.
const OUTAGE_PORT = process.env.STEPFOLD_MONGO_PAYLOAD_OUTAGE_PORT ?? '57027';
const outageClient = new MongoClient(`mongodb://127.0.0.1:${OUTAGE_PORT}/`, {
  serverSelectionTimeoutMS: 1500,
  connectTimeoutMS: 1500,
});

beforeAll(async () => {
  await requireServer(client);
  await services('up', 'mongo', { STEPFOLD_MONGO_PORT: OUTAGE_PORT });
});
afterAll(async () => {
  await client.close();
  await outageClient.close();
});

runPayloadStoreConformance({
  name: 'mongo (FerretDB)',
  createStore: () => createMongoPayloadStore({ db, collection: `p_${process.pid}_${++counter}` }),
  async destroyStore(store) {
    await db.dropCollection((store as MongoPayloadStore).collection).catch(() => {});
  },
  outage: {
    createStore: () =>
      createMongoPayloadStore({
        db: outageClient.db('stepfold_payload_outage'),
        collection: `o_${process.pid}`,
      }),
    stop: () => services('stop', 'mongo', { STEPFOLD_MONGO_PORT: OUTAGE_PORT }),
    start: () => services('start', 'mongo', { STEPFOLD_MONGO_PORT: OUTAGE_PORT }),
  },
});
