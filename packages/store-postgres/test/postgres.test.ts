import type { Store } from '@stepfold/engine';
import { runStoreConformance } from '@stepfold/engine/conformance';
import type pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { createPostgresStore, type PostgresStore } from '../src/index.js';
import { dropTable, ownServer, requireServer, TEST_SCHEMA, testPool, uniqueTable } from './server.js';

const pool = testPool();
// A second pool for a second store object on the same table: the flow part races acquirers across both.
const twinPool = testPool(undefined, 8);
// The outage store lives on a second server (its own port), so stopping it disturbs no other test.
const outage = await ownServer('STEPFOLD_PG_OUTAGE_PORT');
const pools = new Map<Store, pg.Pool>();

beforeAll(() => requireServer(pool));
afterAll(async () => {
  await pool.end();
  await twinPool.end();
});

function open(on: pg.Pool): PostgresStore {
  const store = createPostgresStore({ pool: on, schema: TEST_SCHEMA, table: uniqueTable() });
  pools.set(store, on);
  return store;
}

runStoreConformance({
  name: 'postgres',
  createStore: () => open(pool),
  async destroyStore(store) {
    const on = pools.get(store);
    if (on) await dropTable(on, (store as PostgresStore).table);
  },
  capabilities: ['claims', 'inbox', 'wakes', 'flow', 'stream'],
  reopen: (store) =>
    createPostgresStore({ pool: twinPool, schema: TEST_SCHEMA, table: (store as PostgresStore).table }),
  // Torn text behind the store's back: the snapshot's text column, or each waiting signal's event.
  async corrupt(store, id, what) {
    const { table } = store as PostgresStore;
    const on = pools.get(store) ?? pool;
    if (what === 'snapshot')
      await on.query(
        `UPDATE "${TEST_SCHEMA}"."${table}" SET snapshot = NULL, snapshot_text = '{"id": "torn' WHERE id = $1`,
        [id],
      );
    else
      await on.query(`UPDATE "${TEST_SCHEMA}"."${table}$sent" SET event = '{"type": "sig' WHERE id = $1`, [
        id,
      ]);
  },
  outage: {
    createStore: async () => open(await outage.pool()),
    stop: outage.stop,
    start: outage.start,
  },
});
