/**
 * The few methods of a `pg` client the store calls, described structurally so a pool from any
 * pg 8 release (or a compatible driver) type-checks without depending on `@types/pg`.
 */
export interface PgQueryable {
  query<R = Record<string, unknown>>(
    text: string | { text: string; values?: unknown[]; name?: string },
    values?: unknown[],
  ): Promise<{ rows: R[]; rowCount: number | null }>;
}

/** A `NOTIFY` as a pg client reports it. */
export interface PgNotification {
  channel: string;
  payload?: string | undefined;
}

/**
 * A pooled connection: queries, then `release` (with an error, to destroy it). The events are what
 * a wake subscription listens to on the connection it holds.
 */
export interface PgPoolClient extends PgQueryable {
  release(destroy?: Error | boolean): void;
  on(event: 'notification', listener: (message: PgNotification) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  removeListener(event: 'notification', listener: (message: PgNotification) => void): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: 'end', listener: () => void): unknown;
}

/** The pool the store borrows connections from (a `pg.Pool`). */
export interface PgPool extends PgQueryable {
  connect(): Promise<PgPoolClient>;
}

/** Table in the store's schema recording which migrations ran on which instance table. */
export const MIGRATIONS_TABLE = 'stepfold_migrations';

/** Longest accepted table name: leaves room for the `_lane_fair_due`-style index suffixes within 63 bytes. */
export const MAX_TABLE_NAME = 48;

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/**
 * Throws `TypeError` unless `name` is a plain lowercase identifier (`[a-z_][a-z0-9_]*`, at most `max`
 * characters), so it can be double-quoted into SQL as is.
 */
export function assertIdentifier(what: string, name: unknown, max = 63): asserts name is string {
  if (typeof name !== 'string' || name.length > max || !IDENTIFIER.test(name)) {
    throw new TypeError(
      `invalid PostgreSQL ${what} name ${JSON.stringify(name)}: use 1-${max} of a-z 0-9 _, not starting with a digit`,
    );
  }
}

/** Quoted names of everything one store touches. */
export interface TableNames {
  schema: string;
  table: string;
  /** `"schema"."table"`. */
  qualified: string;
  /** `"schema"."stepfold_migrations"`. */
  migrations: string;
  /** `"schema"."table$sent"`: signals sent to the table's instances and not yet applied (`$` keeps it apart from any table name accepted). */
  sent: string;
  /** `"schema"."table$flow"`: the flow capability's counters. */
  flow: string;
  /** `"schema"."table$stream"`: one row per instance stream (its next offset and fences). */
  stream: string;
  /** `"schema"."table$chunk"`: the streams' entries. */
  chunk: string;
  /** `"schema"."table$fair"`: when each fairness key was last served by a due read (the fair due order's turns). */
  fair: string;
  /** `"schema"."table$search"`: one row per instance and search attribute, what `list`'s `where` reads. */
  search: string;
}

/** Validates the schema and table names and quotes them. */
export function tableNames(schema: string, table: string): TableNames {
  assertIdentifier('schema', schema);
  if (schema.startsWith('pg_')) throw new TypeError(`schema names starting with pg_ are reserved: ${schema}`);
  assertIdentifier('table', table, MAX_TABLE_NAME);
  if (table === MIGRATIONS_TABLE) throw new TypeError(`table name ${table} is reserved`);
  return {
    schema,
    table,
    qualified: `"${schema}"."${table}"`,
    migrations: `"${schema}"."${MIGRATIONS_TABLE}"`,
    sent: `"${schema}"."${table}$sent"`,
    flow: `"${schema}"."${table}$flow"`,
    stream: `"${schema}"."${table}$stream"`,
    chunk: `"${schema}"."${table}$chunk"`,
    fair: `"${schema}"."${table}$fair"`,
    search: `"${schema}"."${table}$search"`,
  };
}

/** One schema change of an instance table; versions are applied in order, each once. */
export interface Migration {
  version: number;
  description: string;
  statements(names: TableNames): string[];
}

/**
 * Every migration, oldest first. Never edit a released one: append a new version instead.
 * `id` uses the "C" collation so `ORDER BY id` is the byte order, which for valid ids is JS string order.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'instances table, due/status/workflow indexes',
    statements: ({ table, qualified }) => [
      `CREATE TABLE ${qualified} (
        id text COLLATE "C" PRIMARY KEY,
        version bigint NOT NULL,
        status text NOT NULL,
        workflow text COLLATE "C" NOT NULL,
        wake_at bigint,
        claimed_until bigint,
        snapshot jsonb,
        snapshot_text text,
        CONSTRAINT "${table}_one_snapshot" CHECK ((snapshot IS NULL) <> (snapshot_text IS NULL))
      )`,
      `CREATE INDEX "${table}_wake_at" ON ${qualified} (wake_at, id) WHERE wake_at IS NOT NULL`,
      `CREATE INDEX "${table}_status" ON ${qualified} (status, id)`,
      `CREATE INDEX "${table}_workflow" ON ${qualified} (workflow, id)`,
    ],
  },
  {
    version: 2,
    description: 'due lanes: (workflow, wake_at, id) index',
    statements: ({ table, qualified }) => [
      // IF NOT EXISTS: on a large table, build it beforehand with CREATE INDEX CONCURRENTLY.
      `CREATE INDEX IF NOT EXISTS "${table}_due_lane" ON ${qualified} (workflow, wake_at, id) WHERE wake_at IS NOT NULL`,
    ],
  },
  {
    version: 3,
    description: 'snapshot columns compressed with lz4 where the server has it',
    // A snapshot over ~2 KB is compressed on every save; lz4 costs the server a fraction of pglz's
    // time. Only new values use it (each save rewrites the snapshot). Servers before 14 lack the
    // clause and servers built without lz4 refuse it: both keep their default, and the migration
    // is recorded all the same.
    statements: ({ qualified }) => [
      // Only columns still at the server's default: a method chosen by hand stays, and a table
      // altered by hand beforehand is spared the lock. Nested under the version test, so older
      // servers never plan a query naming attcompression.
      `DO $$ DECLARE col name; BEGIN
        IF current_setting('server_version_num')::int >= 140000 THEN
          FOR col IN SELECT attname FROM pg_attribute WHERE attrelid = '${qualified}'::regclass
              AND attname IN ('snapshot', 'snapshot_text') AND attcompression NOT IN ('l', 'p') LOOP
            BEGIN
              EXECUTE format('ALTER TABLE ${qualified} ALTER COLUMN %I SET COMPRESSION lz4', col);
            EXCEPTION WHEN feature_not_supported THEN NULL;
            END;
          END LOOP;
        END IF;
      END $$`,
    ],
  },
  {
    version: 4,
    description: 'inbox of sent signals (runner.send)',
    // One row per signal sent and not yet applied: `due_at` is when the polls' backstop may claim
    // it (its notice normally gets it applied well before), `claimed_until` that claim.
    statements: ({ table, sent }) => [
      `CREATE TABLE ${sent} (
        seq bigserial PRIMARY KEY,
        id text COLLATE "C" NOT NULL,
        event text NOT NULL,
        due_at bigint NOT NULL,
        claimed_until bigint
      )`,
      `CREATE INDEX "${table}$sent_id" ON ${sent} (id, seq)`,
      `CREATE INDEX "${table}$sent_due" ON ${sent} (due_at, seq)`,
    ],
  },
  {
    version: 5,
    description: 'due indexes on the effective due time GREATEST(wake_at, claimed_until)',
    // A claim moves its row to the claim's expiry in these, so the polls no longer walk past
    // claimed rows at the head of (wake_at, id). They replace the version 1 and 2 due indexes,
    // which nothing else reads. IF NOT EXISTS: on a large table, build them beforehand with
    // CREATE INDEX CONCURRENTLY (see the README).
    statements: ({ schema, table, qualified }) => [
      `CREATE INDEX IF NOT EXISTS "${table}_due_at" ON ${qualified}
        ((GREATEST(wake_at, claimed_until)), wake_at, id) WHERE wake_at IS NOT NULL`,
      `CREATE INDEX IF NOT EXISTS "${table}_lane_due_at" ON ${qualified}
        (workflow, (GREATEST(wake_at, claimed_until)), wake_at, id) WHERE wake_at IS NOT NULL`,
      `DROP INDEX IF EXISTS "${schema}"."${table}_wake_at"`,
      `DROP INDEX IF EXISTS "${schema}"."${table}_due_lane"`,
    ],
  },
  {
    version: 6,
    description: 'claim_token (a release gives back only its own claims), definition (what send accepts)',
    // `claim_token`: who holds the claim (a due window's token), so `release(ids, token)` leaves
    // others' claims; claims taken before it have none, so no release matches them: they lapse.
    // `definition`: `name@version@hash`, so send checks it without parsing the snapshot (rows
    // not written since are parsed). Nullable columns without a default: catalog changes. Looked
    // up first: columns added by hand beforehand spare the table ALTER TABLE's lock.
    statements: ({ qualified }) => [
      `DO $$ DECLARE col name; BEGIN
        FOREACH col IN ARRAY ARRAY['claim_token', 'definition']::name[] LOOP
          IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = '${qualified}'::regclass
              AND attname = col AND NOT attisdropped) THEN
            EXECUTE format('ALTER TABLE ${qualified} ADD COLUMN %I text', col);
          END IF;
        END LOOP;
      END $$`,
    ],
  },
  {
    version: 7,
    description: 'flow counters (store.flow): concurrency slots and rate windows per key',
    // One row per counter; its holders and waiters in JSONB objects (see flow.ts), so that the
    // row lock an acquire takes covers everything it counts. The GIN indexes find a holder's
    // counters for release and renew. A new table: no lock on the instance table.
    statements: ({ table, flow }) => [
      `CREATE TABLE IF NOT EXISTS ${flow} (
        scope text COLLATE "C" NOT NULL,
        key text COLLATE "C" NOT NULL,
        period bigint NOT NULL,
        lim integer NOT NULL,
        holds jsonb NOT NULL DEFAULT '{}',
        waiting jsonb NOT NULL DEFAULT '{}',
        CONSTRAINT "${table}$flow_pkey" PRIMARY KEY (scope, key, period)
      )`,
      `CREATE INDEX IF NOT EXISTS "${table}$flow_holds" ON ${flow} USING gin (holds)`,
      `CREATE INDEX IF NOT EXISTS "${table}$flow_waiting" ON ${flow} USING gin (waiting)`,
    ],
  },
  {
    version: 8,
    description: 'streams (store.stream): a row per instance stream, a row per entry',
    // The stream row is what an append locks and moves (see stream.ts); the entries are read by
    // (instance, seq) ranges. New tables: no lock on the instance table.
    statements: ({ table, stream, chunk }) => [
      `CREATE TABLE IF NOT EXISTS ${stream} (
        instance text COLLATE "C" NOT NULL,
        next bigint NOT NULL,
        fences jsonb NOT NULL DEFAULT '{}',
        CONSTRAINT "${table}$stream_pkey" PRIMARY KEY (instance)
      )`,
      `CREATE TABLE IF NOT EXISTS ${chunk} (
        instance text COLLATE "C" NOT NULL,
        seq bigint NOT NULL,
        step text NOT NULL,
        attempt bigint NOT NULL,
        data text,
        CONSTRAINT "${table}$chunk_pkey" PRIMARY KEY (instance, seq)
      )`,
    ],
  },
  {
    version: 9,
    description:
      'fair due order: fair_key column, due indexes by fairness key (replacing the migration 5 ones), $fair',
    // `fair_key`: the snapshot's fairKey, '' for none (a default the catalog holds: no rewrite).
    // The due indexes lead with it (after `workflow` for the lanes), so a poll finds each key's
    // earliest due rows by a probe per key instead of walking one key's backlog; instances
    // without a key are the key '' of the same indexes. They replace migration 5's, which no
    // statement reads any more. IF NOT EXISTS: on a large table, build them beforehand with
    // CREATE INDEX CONCURRENTLY (see the README). `$fair`: when each key was last served, a row
    // per key (a new table: no lock on the instances).
    statements: ({ schema, table, qualified, fair }) => [
      `CREATE TABLE IF NOT EXISTS ${fair} (
        key text COLLATE "C" NOT NULL,
        served_at bigint NOT NULL,
        CONSTRAINT "${table}$fair_pkey" PRIMARY KEY (key)
      )`,
      `DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = '${qualified}'::regclass
            AND attname = 'fair_key' AND NOT attisdropped) THEN
          ALTER TABLE ${qualified} ADD COLUMN fair_key text COLLATE "C" NOT NULL DEFAULT '';
        END IF;
      END $$`,
      `CREATE INDEX IF NOT EXISTS "${table}_fair_due" ON ${qualified}
        (fair_key, (GREATEST(wake_at, claimed_until)), wake_at, id) WHERE wake_at IS NOT NULL`,
      `CREATE INDEX IF NOT EXISTS "${table}_lane_fair_due" ON ${qualified}
        (workflow, fair_key, (GREATEST(wake_at, claimed_until)), wake_at, id) WHERE wake_at IS NOT NULL`,
      `DROP INDEX IF EXISTS "${schema}"."${table}_due_at"`,
      `DROP INDEX IF EXISTS "${schema}"."${table}_lane_due_at"`,
    ],
  },
  {
    version: 10,
    description:
      'search attributes: search column, $search table kept by triggers, (name, kind, value, instance) index',
    // `search`: the snapshot's search attributes as JSONB (nullable, no default: a catalog change).
    // `$search`: a row per instance and attribute, its value in the column of its kind (`k` 0
    // boolean as `n` 0/1, 1 number in `n`, 2 string in `s`), so one btree serves equality, ranges,
    // `in` and the order by value (see the README). Triggers keep it: a write whose attributes did
    // not change (most saves) runs none, and every statement that writes `search` (a create, a
    // save, a group commit) is covered without a second round trip. A new table: no lock on the
    // instances beyond the ALTER's and the CREATE TRIGGERs' brief ones.
    statements: ({ schema, table, qualified, search }) => {
      const fn = `"${schema}"."${table}$search_sync"`;
      return [
        `DO $$ BEGIN
          IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = '${qualified}'::regclass
              AND attname = 'search' AND NOT attisdropped) THEN
            ALTER TABLE ${qualified} ADD COLUMN search jsonb;
          END IF;
        END $$`,
        `CREATE TABLE IF NOT EXISTS ${search} (
          instance text COLLATE "C" NOT NULL,
          name text COLLATE "C" NOT NULL,
          k smallint NOT NULL,
          n double precision,
          s text COLLATE "C",
          CONSTRAINT "${table}$search_pkey" PRIMARY KEY (instance, name)
        )`,
        `CREATE INDEX IF NOT EXISTS "${table}$search_value" ON ${search} (name, k, n, s, instance)`,
        `CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $f$
        BEGIN
          IF TG_OP = 'TRUNCATE' THEN
            TRUNCATE ${search};
            RETURN NULL;
          END IF;
          IF TG_OP <> 'INSERT' THEN
            DELETE FROM ${search} WHERE instance = OLD.id;
          END IF;
          IF TG_OP <> 'DELETE' AND NEW.search IS NOT NULL AND jsonb_typeof(NEW.search) = 'object' THEN
            INSERT INTO ${search} (instance, name, k, n, s)
            SELECT NEW.id, e.key,
              CASE jsonb_typeof(e.value) WHEN 'boolean' THEN 0 WHEN 'number' THEN 1 ELSE 2 END,
              CASE jsonb_typeof(e.value) WHEN 'boolean' THEN CASE WHEN e.value = 'true'::jsonb THEN 1 ELSE 0 END
                WHEN 'number' THEN (e.value #>> '{}')::double precision END,
              CASE jsonb_typeof(e.value) WHEN 'string' THEN e.value #>> '{}' END
            FROM jsonb_each(NEW.search) e
            WHERE jsonb_typeof(e.value) IN ('boolean', 'number', 'string');
          END IF;
          RETURN NULL;
        END $f$`,
        `DROP TRIGGER IF EXISTS "${table}$search_insert" ON ${qualified}`,
        `CREATE TRIGGER "${table}$search_insert" AFTER INSERT ON ${qualified}
          FOR EACH ROW WHEN (NEW.search IS NOT NULL) EXECUTE FUNCTION ${fn}()`,
        `DROP TRIGGER IF EXISTS "${table}$search_update" ON ${qualified}`,
        `CREATE TRIGGER "${table}$search_update" AFTER UPDATE OF search ON ${qualified}
          FOR EACH ROW WHEN (OLD.search IS DISTINCT FROM NEW.search) EXECUTE FUNCTION ${fn}()`,
        `DROP TRIGGER IF EXISTS "${table}$search_delete" ON ${qualified}`,
        `CREATE TRIGGER "${table}$search_delete" AFTER DELETE ON ${qualified}
          FOR EACH ROW WHEN (OLD.search IS NOT NULL) EXECUTE FUNCTION ${fn}()`,
        `DROP TRIGGER IF EXISTS "${table}$search_truncate" ON ${qualified}`,
        `CREATE TRIGGER "${table}$search_truncate" AFTER TRUNCATE ON ${qualified}
          FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`,
      ];
    },
  },
  {
    version: 11,
    description:
      'snapshots over ~2 KB stored out of line (toast_tuple_target 128): a claim rewrites a narrow row',
    // A claim (listDue, claimDue) changes claimed_until, which the due indexes hold, so it is never
    // a heap-only update: it writes a new version of the whole row and an entry in every index.
    // With the snapshot inline that version carries the snapshot too (~1.35 KB for a 2 KB one
    // after lz4). A row whose snapshot PostgreSQL compresses (any row over ~2 KB) now has it moved
    // to the table's TOAST table down to a 128-byte row, and a claim copies the pointer, not the
    // snapshot. Rows under ~2 KB stay as they are. Only rows written afterwards change (a save
    // moves its snapshot out); a storage parameter, taken under a lock that blocks no reads or writes.
    statements: ({ qualified }) => [`ALTER TABLE ${qualified} SET (toast_tuple_target = 128)`],
  },
  {
    version: 12,
    description:
      'flow GIN indexes only on what release and renew read: holds of concurrency counters, waiters',
    // Migration 7 indexed every counter's `holds` and `waiting`, so each counter row inserted (a
    // key's first slot) also wrote an entry for its empty `waiting` in the GIN index, and each
    // rate counter its starts. Release and renew look a holder up only among concurrency counters'
    // holds (`period = 0`) and among waiters (`waiting <> '{}'`, a condition they state): partial
    // indexes of those rows serve them and the other rows write nothing to them.
    statements: ({ schema, table, flow }) => [
      `CREATE INDEX IF NOT EXISTS "${table}$flow_slots" ON ${flow} USING gin (holds) WHERE period = 0`,
      `CREATE INDEX IF NOT EXISTS "${table}$flow_waiters" ON ${flow} USING gin (waiting) WHERE waiting <> '{}'`,
      `DROP INDEX IF EXISTS "${schema}"."${table}$flow_holds"`,
      `DROP INDEX IF EXISTS "${schema}"."${table}$flow_waiting"`,
    ],
  },
  {
    version: 13,
    description:
      'flow counters read by primary key only (GIN indexes dropped), room for HOT updates, never truncated',
    // The runner names the counters a release or renewal touches (store.flow's `counters`), so
    // every flow statement finds its rows by primary key. Without the GIN indexes, which no
    // statement reads any more, an update of a counter changes no indexed column: with free room
    // on its page (fillfactor 50) it is a heap-only update, no index entry written. A release
    // without counters (a caller that names none) reads the whole table instead.
    // The table empties whenever nothing is held: a vacuum then would cut it to no page, and a
    // statement planned next (its generic plan, kept) would read it whole as it fills again,
    // since reading no page costs nothing. Kept at its size (vacuum_truncate, PostgreSQL 12+),
    // it is planned as the table it is when busy.
    statements: ({ schema, table, flow }) => [
      `DROP INDEX IF EXISTS "${schema}"."${table}$flow_slots"`,
      `DROP INDEX IF EXISTS "${schema}"."${table}$flow_waiters"`,
      `ALTER TABLE ${flow} SET (fillfactor = 50)`,
      `DO $$ BEGIN
        IF current_setting('server_version_num')::int >= 120000 THEN
          EXECUTE 'ALTER TABLE ${flow.replaceAll("'", "''")} SET (vacuum_truncate = false)';
        END IF;
      END $$`,
    ],
  },
  {
    version: 14,
    description: 'narrow columns kept in the row (STORAGE MAIN): only the snapshot goes out of line',
    // Migration 11's target of 128 bytes holds for every column, not the snapshot alone: once a row
    // has a value out of line, each write of it moves any other value over 24 bytes out too while
    // the row is over the target. A claim's token (a 36-character UUID) went to the TOAST table at
    // every claim, the previous one deleted from it, and so did a save's definition and search
    // attributes. MAIN keeps a column in the row unless the row would not fit a page; the
    // snapshot columns keep EXTENDED. Only columns still at the default: one set by hand stays,
    // and a table altered beforehand is spared the lock (ALTER TABLE's, for a catalog change).
    // Values already out of line come back when next written (an id never is: it stays where it is).
    statements: ({ qualified }) => [
      `DO $$ DECLARE cols text; BEGIN
        SELECT string_agg(format('ALTER COLUMN %I SET STORAGE MAIN', attname), ', ') INTO cols
          FROM pg_attribute WHERE attrelid = '${qualified}'::regclass AND NOT attisdropped
            AND attname IN ('id', 'status', 'workflow', 'claim_token', 'definition', 'fair_key', 'search')
            AND attstorage = 'x';
        IF cols IS NOT NULL THEN
          EXECUTE 'ALTER TABLE ${qualified} ' || cols;
        END IF;
      END $$`,
    ],
  },
  {
    version: 15,
    description: 'every vacuum of the instance table cleans its indexes (vacuum_index_cleanup on)',
    // A claim moves its row in the due indexes and leaves the entry it moved from, dead, at the
    // head of the due order, where every poll's probe steps over it. VACUUM removes such entries
    // only when it cleans the indexes, which since PostgreSQL 14 it skips by default when under
    // 2 % of the heap's pages hold dead rows: due rows written together sit together, so a head of
    // many thousand dead entries can fit in that 2 % and outlive every vacuum. `on` never skips
    // (the option exists from PostgreSQL 12, on by default before 14). Only a table whose option is
    // unset: a value set by hand stays. A storage parameter, instant, under a lock that blocks no
    // reads or writes.
    statements: ({ qualified }) => [
      `DO $$ BEGIN
        IF current_setting('server_version_num')::int >= 120000 AND NOT EXISTS (
            SELECT 1 FROM pg_class, unnest(reloptions) AS o
            WHERE oid = '${qualified.replaceAll("'", "''")}'::regclass AND o LIKE 'vacuum_index_cleanup=%') THEN
          EXECUTE 'ALTER TABLE ${qualified.replaceAll("'", "''")} SET (vacuum_index_cleanup = on)';
        END IF;
      END $$`,
    ],
  },
];

// Two-key advisory locks live apart from single-bigint ones; this first key marks stepfold's.
const LOCK_CLASS = 0x5374_6570;

/**
 * Takes the schema's setup lock until the transaction ends, then creates the schema if it is
 * missing. Every setup in a schema (instance and payload tables alike) takes the one lock: they
 * all race on CREATE SCHEMA.
 */
export async function prepareSchema(client: PgQueryable, schema: string): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, schema]);
  const found = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
  // Checked first: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege even when the schema exists.
  if (found.rowCount === 0) await client.query(`CREATE SCHEMA "${schema}"`);
}

async function migrate(client: PgQueryable, names: TableNames): Promise<void> {
  await prepareSchema(client, names.schema);
  await client.query(`CREATE TABLE IF NOT EXISTS ${names.migrations} (
    table_name text COLLATE "C" NOT NULL,
    version integer NOT NULL,
    description text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_name, version)
  )`);
  const state = await client.query<{ exists: boolean; version: number | null }>(
    `SELECT to_regclass($1) IS NOT NULL AS exists,
       (SELECT max(version) FROM ${names.migrations} WHERE table_name = $2) AS version`,
    [names.qualified, names.table],
  );
  const row = state.rows[0]!;
  let current = row.version ?? 0;
  if (!row.exists) {
    // The table was dropped by hand: forget its history and build it again.
    await client.query(`DELETE FROM ${names.migrations} WHERE table_name = $1`, [names.table]);
    // What was sent to the dropped table's instances goes with them, and so do its flow counters and streams.
    await client.query(`DROP TABLE IF EXISTS ${names.sent}`);
    await client.query(`DROP TABLE IF EXISTS ${names.flow}`);
    await client.query(`DROP TABLE IF EXISTS ${names.stream}`);
    await client.query(`DROP TABLE IF EXISTS ${names.chunk}`);
    await client.query(`DROP TABLE IF EXISTS ${names.fair}`);
    await client.query(`DROP TABLE IF EXISTS ${names.search}`);
    current = 0;
  } else if (current === 0) {
    throw new Error(
      `${names.qualified} exists but was not created by stepfold's setup(); pick another table or drop it`,
    );
  }
  for (const migration of MIGRATIONS) {
    if (migration.version <= current) continue;
    for (const statement of migration.statements(names)) await client.query(statement);
    await client.query(
      `INSERT INTO ${names.migrations} (table_name, version, description) VALUES ($1, $2, $3)`,
      [names.table, migration.version, migration.description],
    );
  }
}

/**
 * Brings the schema, the migrations table and the instance table up to the latest migration, in one
 * transaction under an advisory lock: safe to run any number of times, also concurrently.
 */
export async function runMigrations(pool: PgPool, names: TableNames): Promise<void> {
  await inTransaction(pool, (client) => migrate(client, names));
}

/** Runs `work` in one transaction on a connection of the pool's, committed when it resolves, else rolled back. */
export async function inTransaction(
  pool: PgPool,
  work: (client: PgQueryable) => Promise<void>,
): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    try {
      await work(client);
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
}
