import pg from 'pg';
import { afterAll } from 'vitest';
import { type TestServer, testServer } from '../../../scripts/services/test-servers.mjs';

/** URL of the PostgreSQL test server (from `bash scripts/services.sh up pg`). */
export const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';

/** Schema the tests create their tables in. */
export const TEST_SCHEMA = 'stepfold_test';

/**
 * A pool with short timeouts, so calls fail within ~2 s while the server is stopped. Errors of idle
 * connections (the server went away) are ignored: the pool drops those connections by itself.
 */
export function testPool(url = PG_URL, max = 24): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 2000 });
  pool.on('error', () => {});
  return pool;
}

/** Throws a clear error (never skips) when no server answers at `url`. */
export async function requireServer(pool: pg.Pool, url = PG_URL): Promise<void> {
  try {
    await pool.query('SELECT 1');
  } catch (e) {
    throw new Error(
      `no PostgreSQL at ${url} (set STEPFOLD_PG_URL or run \`bash scripts/services.sh up pg\`)`,
      { cause: e },
    );
  }
}

/** A PostgreSQL of one test file's own for its outage or restart test, and what the test does with it. */
export type OwnServer = TestServer & {
  /** Its URL: same credentials as {@link PG_URL}, its port. */
  url: string;
  /** Ups it on the first call and opens a {@link testPool} of 4 on it that answers; the same pool after. */
  pool(): Promise<pg.Pool>;
};

/**
 * A PostgreSQL on a port of its own (`process.env[variable]`, or a free one, so parallel runs
 * never share it) that only one test file stops and starts, so no other test loses its server.
 * Made on the first `up` (a cluster of its own, `stepfold-PORT`: a few seconds, paid only by a run
 * that needs it); after the file, its `pool` is ended and a server that was made is dropped with
 * its cluster (the file ends other pools of it in an `afterAll` of its own).
 */
export async function ownServer(variable: string): Promise<OwnServer> {
  const server = await testServer('pg', variable);
  const url = new URL(PG_URL);
  url.port = String(server.port);
  let made = false;
  let pool: pg.Pool | undefined;
  afterAll(async () => {
    await pool?.end();
    if (made) await server.drop();
  });
  const up = () => {
    made = true;
    return server.up();
  };
  return {
    ...server,
    url: url.toString(),
    up,
    async pool() {
      await up();
      pool ??= testPool(url.toString(), 4);
      await requireServer(pool, url.toString());
      return pool;
    },
  };
}

let counter = 0;
const run = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;

/** A table name no other test (or test run) uses. */
export function uniqueTable(prefix = 't'): string {
  counter += 1;
  return `${prefix}_${run}_${counter}`;
}

/** Drops a test table and its migration record. */
export async function dropTable(pool: pg.Pool, table: string, schema = TEST_SCHEMA): Promise<void> {
  await pool.query(
    `DROP TABLE IF EXISTS "${schema}"."${table}", "${schema}"."${table}$sent", "${schema}"."${table}$flow",
      "${schema}"."${table}$stream", "${schema}"."${table}$chunk", "${schema}"."${table}$fair",
      "${schema}"."${table}$search"`,
  );
  await pool.query(`DROP FUNCTION IF EXISTS "${schema}"."${table}$search_sync"()`);
  await pool.query(`DELETE FROM "${schema}".stepfold_migrations WHERE table_name = $1`, [table]);
}

/** A statement the store sent through a {@link recordingPool}. */
export interface SentStatement {
  text: string;
  values: unknown[];
}

/**
 * A pool for a store under test that hands every statement the store sends through `query` to
 * `record` (text and values), then runs it on `pool`; `connect` passes through unrecorded.
 *
 * @example
 * const texts: string[] = [];
 * const store = createPostgresStore({ pool: recordingPool(pool, (q) => texts.push(q.text)), schema, table });
 */
export function recordingPool(pool: pg.Pool, record: (q: SentStatement) => void): pg.Pool {
  const recording = {
    query(q: { text: string; values?: unknown[] }) {
      record({ text: q.text, values: q.values ?? [] });
      return pool.query(q);
    },
    connect: () => pool.connect(),
  };
  return recording as unknown as pg.Pool;
}
