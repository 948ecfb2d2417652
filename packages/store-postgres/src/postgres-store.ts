import { createHash } from 'node:crypto';
import type { WakeSubscription } from '@stepfold/engine';
import { defineStore, type StoreDriver } from '@stepfold/engine';
import { pgClaims } from './claims.js';
import { pgFlow, savingFlowStatement } from './flow.js';
import { creatingFlowStatements } from './flow-create.js';
import { type FastKind, fastFlowStatement } from './flow-fast.js';
import { pgInbox } from './inbox.js';
import { isUnavailable } from './map-error.js';
import { pgQuery } from './query.js';
import { searchStatement } from './search-query.js';
import { runMigrations, tableNames } from './setup.js';
import { storeStatements } from './statements.js';
import {
  DEFAULT_MAX_SNAPSHOT_BYTES,
  MAX_SNAPSHOT_BYTES_LIMIT,
  type PostgresStore,
  type PostgresStoreOptions,
} from './store-options.js';
import { pgStream } from './stream.js';
import { pgWakeSource, wakeChannel } from './wakes.js';
import { pgWrites } from './writes.js';

/**
 * A stepfold store on PostgreSQL: one row per instance in its own schema, the snapshot's JSON in a
 * text column (`snapshot_text`; the JSONB `snapshot` with `snapshotColumn: 'jsonb'`), `save` a
 * single `UPDATE … WHERE id = $1 AND version = $2`, and every capability: claims with tokens
 * (`listDue` claims the ids it returns, so concurrent pollers get disjoint batches), the signal
 * inbox, wake notices sent by the writes themselves over NOTIFY, flow counters (`<table>$flow`)
 * and streams (`<table>$stream`, `<table>$chunk`, appends announced over NOTIFY to tails).
 * Call `setup()` once before use.
 */
export function createPostgresStore(options: PostgresStoreOptions): PostgresStore {
  const { pool } = options;
  const names = tableNames(options.schema ?? 'stepfold', options.table ?? 'instances');
  const column = options.snapshotColumn ?? 'text';
  if (column !== 'text' && column !== 'jsonb') {
    throw new TypeError(`snapshotColumn must be 'text' or 'jsonb', not ${JSON.stringify(column)}`);
  }
  const channel = wakeChannel(names.schema, names.table);
  const subscriptions = new Set<WakeSubscription>();
  const query = pgQuery(pool, options.preparedStatements ?? true);
  const sql = storeStatements(names, channel, column);
  // The conditional UPDATE alone (no inbox, no match): the save flow work goes with.
  const update = sql.save({ consume: false, match: false, notify: false });
  const groupCommit = options.groupCommit === true;
  const fastSaves = (kind: FastKind) => ({
    plain: fastFlowStatement(names, kind, update, null),
    notify: fastFlowStatement(names, kind, update, channel),
  });
  const stream = pgStream(
    query,
    names,
    wakeChannel(names.schema, `${names.table}$stream`),
    options.wakePool ?? pool,
  );

  const driver: StoreDriver = {
    setup: () => runMigrations(pool, names),
    ...pgWrites(query, sql, {
      table: names.qualified,
      channel,
      column,
      groupCommit,
      savingFlow: {
        plain: savingFlowStatement(names, update, null, false),
        notify: savingFlowStatement(names, update, channel, false),
        plainAt: savingFlowStatement(names, update, null, true),
        notifyAt: savingFlowStatement(names, update, channel, true),
      },
      fastFlow: {
        handoff: fastSaves('handoff'),
        move: fastSaves('move'),
        release: fastSaves('release'),
        take: fastSaves('take'),
      },
      creatingFlow: creatingFlowStatements(names, channel),
    }),
    async select(id) {
      const r = await query<{ json: string }>(sql.LOAD, [id]);
      return r.rows[0]?.json ?? null;
    },
    async version(id) {
      const r = await query<{ version: string }>(sql.VERSION, [id]);
      const row = r.rows[0];
      return row ? Number(row.version) : null;
    },
    ...pgClaims(query, sql),
    searches: true,
    async page(args) {
      if (args.search) {
        const { text, values } = searchStatement(names, args, args.search);
        return (await query<{ id: string; json: string }>(text, values)).rows;
      }
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
      return (await query<{ id: string; json: string }>(sql.list(where, values.length), values)).rows;
    },
    async remove(id, version) {
      if (version === undefined) return (await query(sql.DELETE, [id])).rowCount === 1;
      return (await query(sql.DELETE_AT, [id, version])).rows.length === 1;
    },
    async close() {
      // The pool belongs to the caller; the connections wake subscriptions hold go back to it.
      await Promise.all([...Array.from(subscriptions, (s) => s.close()), stream.notices.close()]);
    },
    inbox: pgInbox(query, names, channel),
    flow: pgFlow(query, names),
    stream,
    wakes: pgWakeSource(options.wakePool ?? pool, channel, subscriptions),
  };

  const store = defineStore(
    {
      name: 'postgres',
      isUnavailable,
      sizes: {
        asked: options.maxSnapshotBytes,
        fallback: DEFAULT_MAX_SNAPSHOT_BYTES,
        most: MAX_SNAPSHOT_BYTES_LIMIT,
      },
      claimMs: options.claimMs,
      // What a matched save compares in SQL: sha256 over the stored text and the consumed signals.
      // Node's hash, not WebCrypto's: synchronous, so a take from a notice waits for no thread hop.
      digest: async (text) => createHash('sha256').update(text).digest('hex'),
    },
    driver,
  );
  return Object.assign(store, { schema: names.schema, table: names.table, channel }) as PostgresStore;
}
