import type { PayloadStore } from '@stepfold/engine';
import { runPayloadStoreConformance } from '@stepfold/engine/conformance';
import type pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { createPostgresPayloadStore, type PostgresPayloadStore } from '../src/index.js';
import { ownServer, requireServer, TEST_SCHEMA, testPool, uniqueTable } from './server.js';

const pool = testPool();
// The outage store lives on a server of its own (not the instance store suite's).
const outage = await ownServer('STEPFOLD_PG_PAYLOAD_OUTAGE_PORT');
const pools = new Map<PayloadStore, pg.Pool>();

beforeAll(() => requireServer(pool));
afterAll(async () => {
  await pool.end();
});

function open(on: pg.Pool): PostgresPayloadStore {
  const store = createPostgresPayloadStore({ pool: on, schema: TEST_SCHEMA, table: uniqueTable('p') });
  pools.set(store, on);
  return store;
}

runPayloadStoreConformance({
  name: 'postgres',
  createStore: () => open(pool),
  async destroyStore(store) {
    const { schema, table } = store as PostgresPayloadStore;
    await pools.get(store)?.query(`DROP TABLE IF EXISTS "${schema}"."${table}"`);
  },
  outage: {
    createStore: async () => open(await outage.pool()),
    stop: outage.stop,
    start: outage.start,
  },
});
