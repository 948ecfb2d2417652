import {
  createStoreKit,
  type EncodedSnapshot,
  isStepfoldError,
  type ListPage,
  type ListQuery,
  type WakeSubscription,
} from '@stepfold/engine';
import { type Row, toInt8, toRow } from './encode.js';
import { consumingSave, inboxMethods } from './inbox.js';
import { errorCode, isUnavailable } from './map-error.js';
import { createSaveBatcher, type QueuedSave } from './save-batch.js';
import { saveManyStatement, saveManyValues } from './save-many.js';
import { runMigrations, type TableNames, tableNames } from './setup.js';
import { storeStatements } from './statements.js';
import {
  DEFAULT_CLAIM_MS,
  DEFAULT_MAX_SNAPSHOT_BYTES,
  GROUP_COMMIT_CHARS,
  GROUP_COMMIT_ROWS,
  MAX_SNAPSHOT_BYTES_LIMIT,
  type PostgresStore,
  type PostgresStoreOptions,
} from './store-options.js';
import { pgWakeSource, wakeChannel, wakePayload } from './wakes.js';

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

/** listDue's `now` and claim expiry (`now + leaseMs`) as int8 parameters: stored wake times are whole ms rounded up, so `wake_at <= floor(now)` is `wakeAt <= now`. */
function claimWindow(now: number, leaseMs: number): [unknown, unknown] {
  const at = Number.isFinite(now) ? BigInt(Math.floor(now)) : now;
  const until = typeof at === 'bigint' ? at + BigInt(leaseMs) : at;
  return [toInt8(at), toInt8(until)];
}

/**
 * The NOTIFY payload of a write, or undefined when it announces nothing. A write that hands a task
 * to any worker sends its snapshot along (if it fits), so the worker that hears it first can take
 * the task without a claim or a load: one round trip fewer between a signal and its handler.
 */
function noticeOf(encoded: EncodedSnapshot, row: Row): string | undefined {
  if (encoded.notice === null) return undefined;
  return wakePayload(
    encoded.notice,
    row.workflow,
    row.id,
    encoded.handoff ? encoded.json : undefined,
    encoded.busy,
  );
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
 * A stepfold store on PostgreSQL: one row per instance in its own schema, the snapshot's JSON in a
 * text column (`snapshot_text`; the JSONB `snapshot` with `snapshotColumn: 'jsonb'`), `save` a single `UPDATE … WHERE id = $1 AND version = $2`, and `listDue` claiming the ids it
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

  const { CREATE, CREATE_NOTIFY, SAVE, SAVE_NOTIFY, LIST_DUE, LIST_DUE_LANE, CLAIM_DUE, RELEASE_DUE } =
    storeStatements(t, channel);
  const SAVE_MANY = saveManyStatement(t, channel, snapshotColumn);
  const SAVE_CONSUME = consumingSave(SAVE, names, channel, false);
  const SAVE_CONSUME_NOTIFY = consumingSave(SAVE, names, channel, true);
  const LOAD = `SELECT COALESCE(snapshot_text, snapshot::text) AS json FROM ${t} WHERE id = $1`;

  // The instance and any signals sent to it, in one statement.
  const DELETE = `WITH s AS (DELETE FROM ${names.sent} WHERE id = $1) DELETE FROM ${t} WHERE id = $1`;
  const prepared = options.preparedStatements ?? true;
  const query = <R>(what: string, text: string, values: unknown[]) =>
    kit.guard(what, () =>
      pool.query<R>(prepared ? { name: statementName(text), text, values } : { text, values }),
    );

  // Runs a write with the JSON in snapshot_text, or, for a jsonb store, in the JSONB column unless
  // JSONB cannot hold it; `tail` (a notice payload, consumed seqs) follows the two JSON parameters.
  const write = async (what: string, row: Row, sql: string, values: unknown[], tail: unknown[]) => {
    if (!row.asText) {
      try {
        return await query(what, sql, [...values, row.json, null, ...tail]);
      } catch (e) {
        const code = errorCode(e);
        if (code === undefined || !JSONB_FALLBACK_CODES.has(code)) throw e;
      }
    }
    return query(what, sql, [...values, null, row.json, ...tail]);
  };

  // One save in a statement of its own: true when written, false when its condition failed.
  const saveOne = async ({ row, expected, payload }: QueuedSave, consumed?: string[]): Promise<boolean> => {
    const values = [row.id, expected, row.version, row.status, row.workflow, row.wakeAt];
    const tail = payload === undefined ? [] : [payload];
    const r = consumed
      ? await write('save', row, payload === undefined ? SAVE_CONSUME : SAVE_CONSUME_NOTIFY, values, [
          consumed,
          ...tail,
        ])
      : await write('save', row, payload === undefined ? SAVE : SAVE_NOTIFY, values, tail);
    return r.rowCount === 1;
  };
  const inbox = inboxMethods(kit, query, names, channel, claimMs);
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
    send: inbox.send,
    claimSent: inbox.claimSent,
    dropSent: inbox.dropSent,

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
          payload === undefined ? [] : [payload],
        );
      } catch (e) {
        if (errorCode(e) !== '23505') throw e;
        kit.created(false, row.id);
      }
    },

    async load(id) {
      const r = await query<{ json: string }>('load', LOAD, [kit.id(id)]);
      const row = r.rows[0];
      return row ? kit.decode(row.json) : null;
    },

    async save(snapshot, expectedVersion, consumed) {
      const encoded = kit.encode(snapshot);
      const row = toRow(encoded, jsonb);
      if (!Number.isSafeInteger(expectedVersion))
        throw new RangeError('save: expectedVersion must be an integer');
      const payload = noticeOf(encoded, row);
      // A jsonb store's rare text-column rows go alone (its batch statement binds JSONB).
      const save: QueuedSave = { row, expected: expectedVersion, payload };
      // A save that consumes sent signals goes alone: the batch statement knows no inbox.
      const seqs = consumed?.length ? kit.seqs(consumed) : undefined;
      const alone = batcher === null || row.asText === jsonb || seqs !== undefined;
      if (await (alone ? saveOne(save, seqs) : batcher.write(save))) return;
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
      const lease = kit.dueLease(dueQuery, claimMs);
      if (n === null || workflow === null) return [];
      const values: unknown[] = [...claimWindow(now, lease), n];
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
      const lease = kit.dueLease(claimQuery, claimMs);
      const ids = claimQuery?.ids === undefined ? undefined : Array.from(claimQuery.ids, (id) => kit.id(id));
      if (n === null || workflow === null || ids?.length === 0) return [];
      const values: unknown[] = [...claimWindow(now, lease), n];
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
      const r = await query('delete', DELETE, [kit.id(id)]);
      return r.rowCount === 1;
    },

    async close() {
      // The pool belongs to the caller; the connections wake subscriptions hold go back to it.
      await Promise.all(Array.from(subscriptions, (s) => s.close()));
    },
  };
}
