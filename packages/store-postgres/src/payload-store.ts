import { definePayloadStore, type PayloadDriver, type PayloadStore } from '@stepfold/engine/payloads';
import { isUnavailable } from './map-error.js';
import {
  assertIdentifier,
  MAX_TABLE_NAME,
  MIGRATIONS_TABLE,
  type PgPool,
  type PgQueryable,
} from './setup.js';

/** Default body limit of the PostgreSQL payload store: 16 MiB. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 16 * 1024 * 1024;

/** Highest accepted `maxPayloadBytes`: 255 MiB, well inside a text value's 1 GB. */
export const MAX_PAYLOAD_BYTES_LIMIT = 255 * 1024 * 1024;

/** Options of {@link createPostgresPayloadStore}. */
export interface PostgresPayloadStoreOptions {
  /** Your `pg` Pool; the store borrows connections and never ends it. */
  pool: PgPool;
  /** Schema holding the table (default `stepfold`); a plain lowercase identifier. */
  schema?: string | undefined;
  /** Payload table (default `payloads`); a plain lowercase identifier of at most 48 characters. */
  table?: string | undefined;
  /** Largest accepted body, in UTF-8 bytes (default 16 MiB, at most 255 MiB). */
  maxPayloadBytes?: number | undefined;
}

/** A PostgreSQL-backed payload store, and the names it was created with. */
export interface PostgresPayloadStore extends PayloadStore {
  /** Schema of the payload table. */
  readonly schema: string;
  /** Payload table name (unquoted). */
  readonly table: string;
}

// The key the instance store's setup takes too: setups in one schema (both race on CREATE SCHEMA) go one at a time.
const LOCK_CLASS = 0x5374_6570;

async function createTable(client: PgQueryable, schema: string, qualified: string): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, schema]);
  const found = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
  // Checked first: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege even when the schema exists.
  if (found.rowCount === 0) await client.query(`CREATE SCHEMA "${schema}"`);
  // "C" collation: the primary key's order is the byte order, which `list` pages by.
  await client.query(`CREATE TABLE IF NOT EXISTS ${qualified} (
    owner text COLLATE "C" NOT NULL,
    sha256 text COLLATE "C" NOT NULL,
    body text NOT NULL,
    bytes integer NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (owner, sha256)
  )`);
}

/**
 * A payload store on PostgreSQL: one row per `(owner, sha256)` in its own table, the body as text
 * (TOAST compresses large ones), written with `INSERT … ON CONFLICT DO NOTHING`, an owner collected
 * by one `DELETE … WHERE owner = $1`. `setup()` creates the schema and table.
 *
 * @example
 * const payloads = createPostgresPayloadStore({ pool });
 * await payloads.setup();
 * await payloads.put('order-1', sha256Hex(json), json);
 */
export function createPostgresPayloadStore(options: PostgresPayloadStoreOptions): PostgresPayloadStore {
  const { pool } = options;
  const schema = options.schema ?? 'stepfold';
  const table = options.table ?? 'payloads';
  assertIdentifier('schema', schema);
  if (schema.startsWith('pg_')) throw new TypeError(`schema names starting with pg_ are reserved: ${schema}`);
  assertIdentifier('table', table, MAX_TABLE_NAME);
  if (table === MIGRATIONS_TABLE) throw new TypeError(`table name ${table} is reserved`);
  const qualified = `"${schema}"."${table}"`;

  const driver: PayloadDriver = {
    async setup() {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        try {
          await createTable(client, schema, qualified);
          await client.query('COMMIT');
        } catch (e) {
          await client.query('ROLLBACK').catch((rollback: Error) => {
            broken = rollback;
          });
          throw e;
        }
      } finally {
        // A connection that could not roll back is destroyed instead of returned to the pool.
        client.release(broken);
      }
    },
    async put({ owner, sha256, body, bytes }) {
      await pool.query(
        `INSERT INTO ${qualified} (owner, sha256, body, bytes) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
        [owner, sha256, body, bytes],
      );
    },
    async get(owner, sha256) {
      const { rows } = await pool.query<{ body: string }>(
        `SELECT body FROM ${qualified} WHERE owner = $1 AND sha256 = $2`,
        [owner, sha256],
      );
      return rows[0]?.body ?? null;
    },
    async list(owner, after, limit) {
      const { rows } = await pool.query<{ sha256: string }>(
        `SELECT sha256 FROM ${qualified} WHERE owner = $1 AND sha256 > $2 ORDER BY sha256 LIMIT $3`,
        [owner, after ?? '', limit],
      );
      return rows.map((r) => r.sha256);
    },
    async delete(owner, sha256s) {
      const { rowCount } = await pool.query(
        `DELETE FROM ${qualified} WHERE owner = $1 AND sha256 = ANY($2::text[])`,
        [owner, sha256s],
      );
      return rowCount ?? 0;
    },
    async deleteOwner(owner) {
      const { rowCount } = await pool.query(`DELETE FROM ${qualified} WHERE owner = $1`, [owner]);
      return rowCount ?? 0;
    },
  };
  const store = definePayloadStore(
    {
      name: 'postgres payloads',
      isUnavailable,
      sizes: {
        asked: options.maxPayloadBytes,
        fallback: DEFAULT_MAX_PAYLOAD_BYTES,
        most: MAX_PAYLOAD_BYTES_LIMIT,
      },
    },
    driver,
  );
  return { ...store, schema, table };
}
