import { definePayloadStore, type PayloadDriver, type PayloadStore } from '@stepfold/engine';
import { isUnavailable } from './map-error.js';
import { inTransaction, type PgPool, prepareSchema, tableNames } from './setup.js';

/** Default body limit of the PostgreSQL payload store: the kit's 16 MiB. */
export { DEFAULT_MAX_PAYLOAD_BYTES } from '@stepfold/engine';

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

// "C" collation: the primary key's order is the byte order, which `list` pages by.
const createTable = (qualified: string) => `CREATE TABLE IF NOT EXISTS ${qualified} (
    owner text COLLATE "C" NOT NULL,
    sha256 text COLLATE "C" NOT NULL,
    body text NOT NULL,
    bytes integer NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (owner, sha256)
  )`;

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
  // The instance tables' name rules: a payload table sits beside them in the schema.
  const { schema, table, qualified } = tableNames(options.schema ?? 'stepfold', options.table ?? 'payloads');

  const driver: PayloadDriver = {
    setup: () =>
      inTransaction(pool, async (client) => {
        await prepareSchema(client, schema);
        await client.query(createTable(qualified));
      }),
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
  return definePayloadStore(
    {
      name: 'postgres payloads',
      isUnavailable,
      sizes: { asked: options.maxPayloadBytes, most: MAX_PAYLOAD_BYTES_LIMIT },
    },
    driver,
    { schema, table },
  );
}
