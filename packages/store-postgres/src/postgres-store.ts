import {
  createStoreKit,
  type EncodedSnapshot,
  isStepfoldError,
  type ListPage,
  type ListQuery,
  type Store,
  type WakeSource,
  type WakeSubscription,
} from '@stepfold/engine';
import { type Row, toInt8, toRow } from './encode.js';
import { errorCode, isUnavailable } from './map-error.js';
import { createSaveBatcher, type QueuedSave } from './save-batch.js';
import { type SnapshotColumn, saveManyStatement, saveManyValues } from './save-many.js';
import { type PgPool, runMigrations, type TableNames, tableNames } from './setup.js';
import { pgWakeSource, wakeChannel, wakePayload } from './wakes.js';

/** Default size limit: 64 MiB of snapshot JSON. */
export const DEFAULT_MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024;

/** Highest accepted `maxSnapshotBytes`: a JSONB value holds at most 255 MiB. */
export const MAX_SNAPSHOT_BYTES_LIMIT = 255 * 1024 * 1024;

/** Most saves one group-commit statement carries. */
export const GROUP_COMMIT_ROWS = 64;

/** Most snapshot JSON characters one group-commit statement carries (a larger snapshot goes alone). */
export const GROUP_COMMIT_CHARS = 1 << 20;

/** Default claim lease of `listDue`, in the same milliseconds as its `now`. */
export const DEFAULT_CLAIM_MS = 30_000;

/** Options of {@link createPostgresStore}. */
export interface PostgresStoreOptions {
  /** Your `pg` Pool; the store borrows connections and never ends it. */
  pool: PgPool;
  /**
   * Pool the wake subscriptions take their connection from (default `pool`). LISTEN needs a
   * session of its own: when `pool` goes through PgBouncer in transaction mode, point this one at
   * the server (or a session-mode pooler).
   */
  wakePool?: PgPool;
  /** Schema holding the table (default `stepfold`); a plain lowercase identifier. */
  schema?: string;
  /** Instance table (default `instances`); a plain lowercase identifier of at most 48 characters. */
  table?: string;
  /** Largest accepted snapshot, in UTF-8 bytes of its JSON (default 64 MiB, at most 255 MiB). */
  maxSnapshotBytes?: number;
  /** How long ids returned by `listDue` stay claimed, measured against `now` (default 30 000). */
  claimMs?: number;
  /**
   * Send statements as named prepared statements, parsed and planned once per connection (default
   * true). Set false behind a pooler that cannot carry them (PgBouncer in transaction mode before 1.21).
   */
  preparedStatements?: boolean;
  /**
   * Group commit (default false): saves that arrive while one of this store's saves is out go
   * together in the next statement, one UPDATE for many rows, each still conditional on its own
   * version; a save that finds none out goes at once. Fewer statements per write, one save
   * statement out at a time: worth it when many workers keep the database busy, not for one
   * process with a few workflows in flight (see the README).
   */
  groupCommit?: boolean;
  /**
   * Column new writes put the snapshot JSON in (default `'text'`): `snapshot_text`, stored verbatim,
   * or `'jsonb'`: `snapshot`, parsed by the server on every write (about 1.5× the server's CPU per
   * write, measured) but open to JSONB operators and indexes. Reads take whichever is set, so a
   * table may hold both and the option can change at any time.
   */
  snapshotColumn?: SnapshotColumn;
}

/** A PostgreSQL-backed {@link Store}, with the names and lease it was created with. */
export interface PostgresStore extends Store {
  /** Schema of the instance table. */
  readonly schema: string;
  /** Instance table name (unquoted). */
  readonly table: string;
  /** Claim lease of `listDue`. */
  readonly claimMs: number;
  /** NOTIFY channel of this table's wake notices (see {@link PostgresStore.wakes}). */
  readonly channel: string;
  readonly claimsDue: true;
  releaseDue(ids: readonly string[]): Promise<void>;
  /**
   * Wake notices over LISTEN/NOTIFY: each subscription holds one pool connection until closed, and
   * reconnects with backoff when it breaks. Notices are hints; `listDue` stays the source of truth.
   */
  readonly wakes: WakeSource;
}

// One name per distinct statement text, shared by every store in the process: a name must not be
// reused for another text on the same connection, and stores may share a pool.
const statementNames = new Map<string, string>();
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `stepfold_${statementNames.size + 1}`;
    statementNames.set(text, name);
  }
  return name;
}

// JSONB refused the value (NUL or bad escape, or the binary form over 255 MiB): store the text instead.
const JSONB_FALLBACK_CODES = new Set(['22P05', '54000']);

/** listDue's `now` and claim expiry as int8 parameters: stored wake times are whole ms rounded up, so `wake_at <= floor(now)` is `wakeAt <= now`. */
function claimWindow(now: number, claimMs: number): [unknown, unknown] {
  const at = Number.isFinite(now) ? BigInt(Math.floor(now)) : now;
  const until = typeof at === 'bigint' ? at + BigInt(claimMs) : at;
  return [toInt8(at), toInt8(until)];
}

/**
 * The NOTIFY payload of a write, or undefined when it announces nothing. A write that hands a task
 * to any worker sends its snapshot along (if it fits), so the worker that hears it first can take
 * the task without a claim or a load: one round trip fewer between a signal and its handler.
 */
function noticeOf(encoded: EncodedSnapshot, row: Row): string | undefined {
  if (encoded.notice === null) return undefined;
  return wakePayload(encoded.notice, row.workflow, row.id, encoded.handoff ? encoded.json : undefined);
}

/** Claimed rows in (wake time, id) order: RETURNING gives them in no particular order. */
function byWakeTime<R extends { id: string; wake_at: string }>(rows: R[]): R[] {
  const keyed = rows.map((row) => ({ row, at: BigInt(row.wake_at) }));
  keyed.sort((a, b) =>
    a.at < b.at ? -1 : a.at > b.at ? 1 : a.row.id < b.row.id ? -1 : a.row.id > b.row.id ? 1 : 0,
  );
  return keyed.map((k) => k.row);
}

/**
 * A stepfold store on PostgreSQL: one row per instance in its own schema, the snapshot in a JSONB
 * column, `save` a single `UPDATE … WHERE id = $1 AND version = $2`, and `listDue` claiming the ids it
 * returns so concurrent pollers get disjoint batches. A write that announces a wake time sends its
 * NOTIFY in the same statement. Call `setup()` once before use.
 */
export function createPostgresStore(options: PostgresStoreOptions): PostgresStore {
  const { pool } = options;
  const names: TableNames = tableNames(options.schema ?? 'stepfold', options.table ?? 'instances');
  const kit = createStoreKit('postgres', isUnavailable, {
    asked: options.maxSnapshotBytes,
    fallback: DEFAULT_MAX_SNAPSHOT_BYTES,
    most: MAX_SNAPSHOT_BYTES_LIMIT,
  });
  const claimMs = options.claimMs ?? DEFAULT_CLAIM_MS;
  if (!(Number.isSafeInteger(claimMs) && claimMs >= 0)) {
    throw new RangeError('claimMs must be a non-negative integer');
  }
  const t = names.qualified;
  const snapshotColumn = options.snapshotColumn ?? 'text';
  if (snapshotColumn !== 'text' && snapshotColumn !== 'jsonb') {
    throw new TypeError(`snapshotColumn must be 'text' or 'jsonb', not ${JSON.stringify(snapshotColumn)}`);
  }
  const jsonb = snapshotColumn === 'jsonb';
  const channel = wakeChannel(names.schema, names.table);
  const subscriptions = new Set<WakeSubscription>();

  // Statement texts, built once. A write whose snapshot announces a wake time (kit.encode's
  // `notice`) runs the *_NOTIFY form: the same write in a CTE and pg_notify over its RETURNING, so
  // the notice goes out only if the row was written (a failed condition returns no row, sends
  // nothing, and leaves rowCount 0) and is delivered at commit, never before the write is visible.
  // Writes without a notice run the plain statement and pay nothing for wakes.
  const notifying = (sql: string, payload: number) =>
    `WITH w AS (${sql} RETURNING 1) SELECT pg_notify('${channel}', $${payload}) FROM w`;
  const CREATE = `INSERT INTO ${t} (id, version, status, workflow, wake_at, snapshot, snapshot_text)
           VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)`;
  const CREATE_NOTIFY = notifying(CREATE, 8);
  const SAVE = `UPDATE ${t} SET version = $3, status = $4, workflow = $5, wake_at = $6, claimed_until = NULL,
           snapshot = $7::jsonb, snapshot_text = $8
         WHERE id = $1 AND version = $2`;
  const SAVE_NOTIFY = notifying(SAVE, 9);
  // Due rows in (wake_at, id) order, all workflows or one lane ($4), each served by its partial
  // index; MATERIALIZED: the locking subquery runs once, so LIMIT bounds the batch.
  // claimDue's forms also return the JSON, and may narrow to given ids ($5).
  const due = (lane: string, returning = '') => `WITH due AS MATERIALIZED (
           SELECT id FROM ${t}
           WHERE ${lane}wake_at <= $1 AND (claimed_until IS NULL OR claimed_until <= $1)
           ORDER BY wake_at, id
           LIMIT $3
           FOR UPDATE SKIP LOCKED)
         UPDATE ${t} AS i SET claimed_until = $2 FROM due WHERE i.id = due.id
         RETURNING i.id, i.wake_at${returning}`;
  const LIST_DUE = due('');
  const LIST_DUE_LANE = due('workflow = $4 AND ');
  const json = ', COALESCE(i.snapshot_text, i.snapshot::text) AS json';
  // Four fixed texts, not one with `$4 IS NULL OR …`: a prepared generic plan must still pick the
  // lane index for a lane and the primary key for named ids.
  const CLAIM_DUE = {
    all: due('', json),
    lane: due('workflow = $4 AND ', json),
    ids: due('id = ANY($4::text[]) AND ', json),
    laneIds: due('workflow = $4 AND id = ANY($5::text[]) AND ', json),
  } as const;
  const SAVE_MANY = saveManyStatement(t, channel, snapshotColumn);
  const RELEASE_DUE = `UPDATE ${t} SET claimed_until = NULL
         WHERE id = ANY($1::text[]) AND claimed_until IS NOT NULL`;

  const prepared = options.preparedStatements ?? true;
  const query = <R>(what: string, text: string, values: unknown[]) =>
    kit.guard(what, () =>
      pool.query<R>(prepared ? { name: statementName(text), text, values } : { text, values }),
    );

  // Runs a write with the JSON in snapshot_text, or, for a jsonb store, in the JSONB column unless
  // JSONB cannot hold it; a notice payload, for the *_NOTIFY forms, is the last parameter.
  const write = async (what: string, row: Row, sql: string, values: unknown[], payload?: string) => {
    if (!row.asText) {
      try {
        return await query(
          what,
          sql,
          payload === undefined ? [...values, row.json, null] : [...values, row.json, null, payload],
        );
      } catch (e) {
        const code = errorCode(e);
        if (code === undefined || !JSONB_FALLBACK_CODES.has(code)) throw e;
      }
    }
    return query(
      what,
      sql,
      payload === undefined ? [...values, null, row.json] : [...values, null, row.json, payload],
    );
  };

  // One save in a statement of its own: true when written, false when its condition failed.
  const saveOne = async ({ row, expected, payload }: QueuedSave): Promise<boolean> => {
    const r = await write(
      'save',
      row,
      payload === undefined ? SAVE : SAVE_NOTIFY,
      [row.id, expected, row.version, row.status, row.workflow, row.wakeAt],
      payload,
    );
    return r.rowCount === 1;
  };
  const batcher =
    options.groupCommit === true
      ? createSaveBatcher({
          maxRows: GROUP_COMMIT_ROWS,
          maxChars: GROUP_COMMIT_CHARS,
          one: saveOne,
          async many(saves) {
            const r = await query<{ id: string }>('save', SAVE_MANY(saves.length), saveManyValues(saves));
            return new Set(r.rows.map((x) => x.id));
          },
          retryAlone: (e) => !isStepfoldError(e, 'STORE_UNAVAILABLE'),
        })
      : null;

  return {
    maxSnapshotBytes: kit.maxSnapshotBytes,
    schema: names.schema,
    table: names.table,
    claimMs,
    channel,
    claimsDue: true,
    wakes: pgWakeSource(options.wakePool ?? pool, channel, subscriptions),

    setup: () => runMigrations(pool, names, kit.guard),

    async create(snapshot) {
      const encoded = kit.encode(snapshot);
      const row = toRow(encoded, jsonb);
      const payload = noticeOf(encoded, row);
      try {
        await write(
          'create',
          row,
          payload === undefined ? CREATE : CREATE_NOTIFY,
          [row.id, row.version, row.status, row.workflow, row.wakeAt],
          payload,
        );
      } catch (e) {
        if (errorCode(e) !== '23505') throw e;
        kit.created(false, row.id);
      }
    },

    async load(id) {
      const r = await query<{ json: string }>(
        'load',
        `SELECT COALESCE(snapshot_text, snapshot::text) AS json FROM ${t} WHERE id = $1`,
        [kit.id(id)],
      );
      const row = r.rows[0];
      return row ? kit.decode(row.json) : null;
    },

    async save(snapshot, expectedVersion) {
      const encoded = kit.encode(snapshot);
      const row = toRow(encoded, jsonb);
      if (!Number.isSafeInteger(expectedVersion))
        throw new RangeError('save: expectedVersion must be an integer');
      const payload = noticeOf(encoded, row);
      // A jsonb store's rare text-column rows go alone (its batch statement binds JSONB).
      const save: QueuedSave = { row, expected: expectedVersion, payload };
      if (await (batcher !== null && row.asText !== jsonb ? batcher.write(save) : saveOne(save))) return;
      // The condition failed: tell a lost race from a missing instance.
      const current = await query<{ version: string }>('save', `SELECT version FROM ${t} WHERE id = $1`, [
        row.id,
      ]);
      const found = current.rows[0];
      kit.updated(found ? { stored: Number(found.version) } : 'missing', row.id, expectedVersion);
    },

    async listDue(now, limit, dueQuery) {
      const n = kit.dueLimit(now, limit);
      const workflow = kit.dueWorkflow(dueQuery);
      if (n === null || workflow === null) return [];
      const values: unknown[] = [...claimWindow(now, claimMs), n];
      if (workflow !== undefined) values.push(workflow);
      const r = await query<{ id: string; wake_at: string }>(
        'listDue',
        workflow === undefined ? LIST_DUE : LIST_DUE_LANE,
        values,
      );
      return byWakeTime(r.rows).map((x) => x.id);
    },

    async claimDue(now, limit, claimQuery) {
      const n = kit.dueLimit(now, limit);
      const workflow = kit.dueWorkflow(claimQuery);
      const ids = claimQuery?.ids === undefined ? undefined : Array.from(claimQuery.ids, (id) => kit.id(id));
      if (n === null || workflow === null || ids?.length === 0) return [];
      const values: unknown[] = [...claimWindow(now, claimMs), n];
      if (workflow !== undefined) values.push(workflow);
      if (ids !== undefined) values.push(ids);
      const text =
        workflow === undefined
          ? ids === undefined
            ? CLAIM_DUE.all
            : CLAIM_DUE.ids
          : ids === undefined
            ? CLAIM_DUE.lane
            : CLAIM_DUE.laneIds;
      const r = await query<{ id: string; wake_at: string; json: string }>('claimDue', text, values);
      return byWakeTime(r.rows).map((x) => kit.decode(x.json));
    },

    async releaseDue(ids) {
      const list = Array.from(ids, (id) => kit.id(id));
      if (list.length === 0) return;
      await query('releaseDue', RELEASE_DUE, [list]);
    },

    async list(q: ListQuery): Promise<ListPage> {
      const args = kit.listArgs(q);
      if (!args) return { items: [], cursor: q.cursor || null };
      const where: string[] = [];
      const values: unknown[] = [];
      const add = (clause: string, value: unknown) => {
        values.push(value);
        where.push(`${clause} $${values.length}`);
      };
      if (args.status !== undefined) add('status =', args.status);
      if (args.workflow !== undefined) add('workflow =', args.workflow);
      if (args.cursor !== null) add('id >', args.cursor);
      // One extra row tells whether another page exists.
      values.push(args.limit + 1);
      const r = await query<{ id: string; json: string }>(
        'list',
        `SELECT id, COALESCE(snapshot_text, snapshot::text) AS json FROM ${t}
         ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY id LIMIT $${values.length}`,
        values,
      );
      return kit.page(r.rows, args.limit);
    },

    async delete(id) {
      const r = await query('delete', `DELETE FROM ${t} WHERE id = $1`, [kit.id(id)]);
      return r.rowCount === 1;
    },

    async close() {
      // The pool belongs to the caller; the connections wake subscriptions hold go back to it.
      await Promise.all(Array.from(subscriptions, (s) => s.close()));
    },
  };
}
