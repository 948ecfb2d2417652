import type { DefinedStore, DueClaims, FlowStore, Inbox, WakeSource } from '@stepfold/engine';
import type { SnapshotColumn } from './save-many.js';
import type { PgPool } from './setup.js';

/** Default size limit: 64 MiB of snapshot JSON. */
export const DEFAULT_MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024;

/** Highest accepted `maxSnapshotBytes`: a JSONB value holds at most 255 MiB. */
export const MAX_SNAPSHOT_BYTES_LIMIT = 255 * 1024 * 1024;

/** Most saves one group-commit statement carries. */
export const GROUP_COMMIT_ROWS = 64;

/** Most snapshot JSON characters one group-commit statement carries (a larger snapshot goes alone). */
export const GROUP_COMMIT_CHARS = 1 << 20;

/** Options of {@link createPostgresStore}. */
export interface PostgresStoreOptions {
  /** Your `pg` Pool; the store borrows connections and never ends it. */
  pool: PgPool;
  /**
   * Pool the wake subscriptions take their connection from (default `pool`). LISTEN needs a
   * session of its own: when `pool` goes through PgBouncer in transaction mode, point this one at
   * the server (or a session-mode pooler).
   */
  wakePool?: PgPool | undefined;
  /** Schema holding the table (default `stepfold`); a plain lowercase identifier. */
  schema?: string | undefined;
  /** Instance table (default `instances`); a plain lowercase identifier of at most 48 characters. */
  table?: string | undefined;
  /** Largest accepted snapshot, in UTF-8 bytes of its JSON (default 64 MiB, at most 255 MiB). */
  maxSnapshotBytes?: number | undefined;
  /** How long ids returned by `listDue`/`claims.claimDue` stay claimed, measured against `now` (default 30 000), unless a call passes `leaseMs`. */
  claimMs?: number | undefined;
  /**
   * Send statements as named prepared statements, parsed and planned once per connection (default
   * true). Set false behind a pooler that cannot carry them (PgBouncer in transaction mode before 1.21).
   */
  preparedStatements?: boolean | undefined;
  /**
   * Group commit (default false): saves that arrive while one of this store's saves is out go
   * together in the next statement, one UPDATE for many rows, each still conditional on its own
   * version; a save that finds none out goes at once. Fewer statements per write, one save
   * statement out at a time: worth it when many workers keep the database busy, not for one
   * process with a few workflows in flight (see the README).
   */
  groupCommit?: boolean | undefined;
  /**
   * Column new writes put the snapshot JSON in (default `'text'`): `snapshot_text`, stored verbatim,
   * or `'jsonb'`: `snapshot`, parsed by the server on every write (about 1.5× the server's CPU per
   * write, measured) but open to JSONB operators and indexes. Reads take whichever is set, so a
   * table may hold both and the option can change at any time.
   */
  snapshotColumn?: SnapshotColumn | undefined;
}

/** A PostgreSQL-backed `Store` with every capability (claims, inbox, wakes, flow), and the names it was created with. */
export interface PostgresStore extends DefinedStore {
  /** Schema of the instance table. */
  readonly schema: string;
  /** Instance table name (unquoted). */
  readonly table: string;
  /** NOTIFY channel of this table's wake notices (see {@link PostgresStore.wakes}). */
  readonly channel: string;
  /** Claims on due instances, with the owner's token in `claim_token` (see the README). */
  readonly claims: DueClaims;
  /** The signal inbox behind `runner.send`, the `<table>$sent` table. */
  readonly inbox: Inbox;
  /**
   * Wake notices over LISTEN/NOTIFY: each subscription holds one pool connection until closed, and
   * reconnects with backoff when it breaks. Notices are hints; `listDue` stays the source of truth.
   */
  readonly wakes: WakeSource;
  /** Concurrency slots and rate windows per key, the `<table>$flow` table (see the README). */
  readonly flow: FlowStore;
}
