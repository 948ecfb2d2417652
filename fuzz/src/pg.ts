import { createPostgresStore, type PostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';

/** The PostgreSQL server `pnpm services` starts (STEPFOLD_PG_URL overrides). */
export const PG_URL =
  process.env['STEPFOLD_PG_URL'] ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';

/** A fresh schema of its own on the server, the store over it, and how to drop it. */
export interface PgFixture {
  pool: pg.Pool;
  store: PostgresStore;
  schema: string;
  /** `"schema"."instances"`. */
  table: string;
  /** The store URL the CLI opens it with. */
  url: string;
  drop(): Promise<void>;
}

/** Opens a PostgreSQL store in a schema no other run uses. */
export async function openPg(tag: string): Promise<PgFixture> {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
  pool.on('error', () => {});
  const schema = `fuzz_${tag}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const store = createPostgresStore({ pool, schema });
  await store.setup();
  const url = new URL(PG_URL);
  url.searchParams.set('schema', schema);
  return {
    pool,
    store,
    schema,
    table: `"${schema}"."instances"`,
    url: url.toString(),
    drop: async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}
