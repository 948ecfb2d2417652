import { runPayloadStoreConformance } from '@stepfold/engine/conformance';
import { createMongoPayloadStore, type MongoPayloadStore } from '../src/index.js';
import { outageServer, testClient } from './server.js';

const client = testClient();
const db = client.db('stepfold_payloads');
let counter = 0;

// A FerretDB of its own for the outage test (not the instance store suite's).
const outage = await outageServer('STEPFOLD_MONGO_PAYLOAD_OUTAGE_PORT', client);

runPayloadStoreConformance({
  name: 'mongo (FerretDB)',
  createStore: () => createMongoPayloadStore({ db, collection: `p_${process.pid}_${++counter}` }),
  async destroyStore(store) {
    await db.dropCollection((store as MongoPayloadStore).collection).catch(() => {});
  },
  outage: {
    createStore: () =>
      createMongoPayloadStore({
        db: outage.client.db('stepfold_payload_outage'),
        collection: `o_${process.pid}`,
      }),
    stop: outage.stop,
    start: outage.start,
  },
});
