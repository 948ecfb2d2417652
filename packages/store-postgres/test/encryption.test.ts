import type { Store } from '@stepfold/engine';
import { runEncryptionConformance } from '@stepfold/engine/conformance';
import { createPostgresPayloadStore, type PostgresPayloadStore, type PostgresStore } from '../src/index.js';
import { TEST_SCHEMA, uniqueTable } from './server.js';
import { useTestTables } from './test-tables.js';

// Encryption at rest: every row of the store's tables (instances, sent signals, flow, streams) and
// of its payload table, read as text straight from PostgreSQL, holds no plaintext.
const { pool, store } = useTestTables('enc');
const payloadTables: string[] = [];

/** Every row of every table named `table` or `table$…` in the test schema, as text. */
async function tableText(table: string): Promise<string> {
  const { rows } = await pool.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND (table_name = $2 OR starts_with(table_name, $2 || '$')) ORDER BY table_name`,
    [TEST_SCHEMA, table],
  );
  const texts = await Promise.all(
    rows.map(async ({ table_name }) => {
      const r = await pool.query<{ row: string }>(
        `SELECT t::text AS row FROM "${TEST_SCHEMA}"."${table_name}" t`,
      );
      return r.rows.map((x) => x.row).join('\n');
    }),
  );
  return texts.join('\n');
}

runEncryptionConformance({
  name: 'postgres',
  createStore: () => store(),
  rawText: (s: Store) => tableText((s as PostgresStore).table),
  createPayloadStore() {
    const table = uniqueTable('encp');
    payloadTables.push(table);
    return createPostgresPayloadStore({ pool, schema: TEST_SCHEMA, table });
  },
  async rawPayloadText(p) {
    const { table } = p as PostgresPayloadStore;
    const text = await tableText(table);
    await pool.query(`DROP TABLE IF EXISTS "${TEST_SCHEMA}"."${table}"`);
    return text;
  },
});
