import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';

/** URL of the PostgreSQL test server (from `bash scripts/services.sh up pg`). */
export const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';

/** Port of the second server the outage test stops and starts; nothing else uses it. */
export const OUTAGE_PG_PORT = process.env.STEPFOLD_PG_OUTAGE_PORT ?? '55432';

/** URL of that second server: same credentials as {@link PG_URL}, other port. */
export const OUTAGE_PG_URL = (() => {
  const url = new URL(PG_URL);
  url.port = OUTAGE_PG_PORT;
  return url.toString();
})();

/** Port of a third server, stopped and started by the wake-subscription restart test alone. */
export const WAKES_PG_PORT = process.env.STEPFOLD_PG_WAKES_PORT ?? '55433';

/** URL of that third server. */
export const WAKES_PG_URL = (() => {
  const url = new URL(PG_URL);
  url.port = WAKES_PG_PORT;
  return url.toString();
})();

/** Schema the tests create their tables in. */
export const TEST_SCHEMA = 'stepfold_test';

const SERVICES = fileURLToPath(new URL('../../../scripts/services.sh', import.meta.url));

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

/** Runs `services.sh <command> pg` for the server on `port` (`up`, `stop` or `start`). */
export async function pgServer(port: string, command: 'up' | 'stop' | 'start'): Promise<void> {
  await promisify(execFile)('bash', [SERVICES, command, 'pg'], {
    env: { ...process.env, STEPFOLD_PG_PORT: port },
  });
}

/** {@link pgServer} for the outage server's port. */
export function outageServer(command: 'up' | 'stop' | 'start'): Promise<void> {
  return pgServer(OUTAGE_PG_PORT, command);
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
