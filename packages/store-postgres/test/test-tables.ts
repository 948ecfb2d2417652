import { afterAll, beforeAll } from 'vitest';
import { createPostgresStore, type PostgresStore, type PostgresStoreOptions } from '../src/index.js';
import { dropTable, requireServer, TEST_SCHEMA, testPool, uniqueTable } from './server.js';

/** Store options a test may set; the pool, schema and table come from {@link useTestTables}. */
export type TestStoreOptions = Omit<PostgresStoreOptions, 'pool' | 'schema' | 'table'>;

/**
 * A test file's tables on the shared server: the pool is checked in `beforeAll`; `table()` names a
 * fresh table and `store()` sets a store up on one; every table named is dropped in `afterAll`,
 * then the pool is closed.
 *
 * @example
 * const { pool, store } = useTestTables('c');
 * it('claims', async () => { const s = await store({ claimMs: 50 }); ... });
 */
export function useTestTables(prefix: string) {
  const pool = testPool();
  const tables: string[] = [];
  beforeAll(() => requireServer(pool));
  afterAll(async () => {
    for (const table of tables) await dropTable(pool, table).catch(() => {});
    await pool.end();
  });
  const table = (p = prefix): string => {
    const name = uniqueTable(p);
    tables.push(name);
    return name;
  };
  return {
    pool,
    table,
    async store(options: TestStoreOptions = {}, p = prefix): Promise<PostgresStore> {
      const s = createPostgresStore({ ...options, pool, schema: TEST_SCHEMA, table: table(p) });
      await s.setup();
      return s;
    },
  };
}
