import type { Store } from '@stepfold/engine';
import { createPostgresStore } from '@stepfold/store-postgres';
import { createRedisStore, flowPrefixOf } from '@stepfold/store-redis';
import { Redis } from 'ioredis';
import pg from 'pg';

// The PostgreSQL and Redis stores the tests across worker processes run on, each test under a
// namespace of its own (a schema; a hash-tagged key prefix) that the worker processes are given too.

const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';
const REDIS_URL = process.env.STEPFOLD_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The stores a test across worker processes can run on. */
export type TestStoreName = 'postgres' | 'redis';

/** A store of one test's own, and what its worker processes need to open it. */
export interface TestStore {
  name: TestStoreName;
  url: string;
  /** The schema (PostgreSQL) or key prefix (Redis) the workers are given. */
  namespace: string;
  store: Store;
  /** Closes the store, removes everything the test wrote, then lets go of the client. */
  drop(): Promise<void>;
}

/** How a test store's client is set up. */
export interface TestStoreOptions {
  /** The PostgreSQL pool's size (default 6). */
  poolMax?: number;
}

/** The PostgreSQL or Redis store under namespace `tag` (a schema; a hash-tagged key prefix). */
export function openTestStore(name: TestStoreName, tag: string, o: TestStoreOptions = {}): TestStore {
  if (name === 'postgres') {
    const pool = new pg.Pool({ connectionString: PG_URL, max: o.poolMax ?? 6 });
    const store = createPostgresStore({ pool, schema: tag });
    return {
      name,
      url: PG_URL,
      namespace: tag,
      store,
      async drop() {
        await store.close();
        await pool.query(`DROP SCHEMA IF EXISTS "${tag}" CASCADE`);
        await pool.end();
      },
    };
  }
  const client = new Redis(REDIS_URL);
  const prefix = `stepfold:{${tag}}:`;
  const store = createRedisStore({ client, prefix });
  return {
    name,
    url: REDIS_URL,
    namespace: prefix,
    store,
    async drop() {
      await store.close();
      // The flow counters are under the flow prefix (the hash tag's braces made brackets).
      for (const pattern of [`${prefix}*`, `${flowPrefixOf(prefix).replace(/[[\]]/g, '\\$&')}*`]) {
        let cursor = '0';
        do {
          const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
          if (keys.length) await client.del(...keys);
          cursor = next;
        } while (cursor !== '0');
      }
      client.disconnect();
    },
  };
}
