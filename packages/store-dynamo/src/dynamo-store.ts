import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type DefinedStore, defineStore } from '@stepfold/engine';
import { dueClaims } from './due.js';
import { DEFAULT_MAX_SNAPSHOT_BYTES } from './encode.js';
import { dynamoFlow } from './flow.js';
import { inbox } from './inbox.js';
import { items } from './items.js';
import { plainPage } from './list.js';
import { isUnavailable } from './map-error.js';
import { searchPage } from './search-list.js';
import { assertTableName, type EnsureTableOptions, prepareTable } from './setup.js';
import { ensureShardCount, migrateLegacyDue, tableOf } from './shards.js';
import { dynamoStream } from './stream.js';
import { type DynamoStreamsOptions, dynamoWakeSource } from './streams.js';

/** Default table name. */
export const DEFAULT_TABLE = 'stepfold_instances';

/** Options of {@link createDynamoStore}. */
export interface DynamoStoreOptions {
  /** The caller's client (region, credentials, endpoint, retries, timeouts); never destroyed by the store. */
  client: DynamoDBClient;
  /** Table holding one item per instance (default `stepfold_instances`). */
  table?: string | undefined;
  /** Largest accepted snapshot, in UTF-8 bytes of its JSON (default 398 KiB, so the whole item fits in 400 KB). */
  maxSnapshotBytes?: number | undefined;
  /** How long `setup` waits for a new table (or a new index) to become ACTIVE. */
  setup?: EnsureTableOptions | undefined;
  /** How long claims last, in ms against the claiming call's `now`, when the call sets no `leaseMs` (default 30 000). */
  claimMs?: number | undefined;
  /**
   * Partitions the due index, each workflow's lane and the inbox's index are spread over (default
   * 1, 1-64); a poll queries them all. Raise it when the due index takes more writes than one
   * partition absorbs (~1,000 a second). Recorded in the table: `setup` refuses a store that would
   * read fewer shards than items may be on, or write more; change it online with
   * `readDueShards` and {@link reshardDue} (README, "Changing dueShards").
   */
  dueShards?: number | undefined;
  /**
   * While a change of `dueShards` rolls out: how many shards polls query (default `dueShards`; at
   * least it). Set it to the larger of the old and new count, so an instance written under
   * either is found.
   */
  readDueShards?: number | undefined;
  /**
   * Wake notices from the table's DynamoDB stream (`store.wakes`): a worker then hears of a timer,
   * a handed-off task or a `runner.send` within about `idleMs` instead of at its next poll. `setup`
   * enables the stream (new images) on the table. Without it the store has no `wakes` and workers poll.
   */
  streams?: DynamoStreamsOptions | undefined;
}

/**
 * A stepfold store on DynamoDB. One item per instance keyed by `id`, its inbox in the same item;
 * creates are PutItems conditional on `attribute_not_exists(id)`, saves and sends UpdateItems
 * conditional on the stored version or status; due instances, the inbox and listings are Queries on
 * global secondary indexes, never Scans, searches by attribute too (an index item per value, written
 * with the instance in one transaction when its values change). Capabilities: `claims`, `inbox`, `flow` (an item per
 * flow key in the same table), `stream` (an item per append, in the same table), and `wakes` with
 * the `streams` option (read from the table's DynamoDB stream).
 *
 * @example
 * const store = createDynamoStore({ client, streams: { client: new DynamoDBStreamsClient({}) } });
 * await store.setup(); // creates the table (or enables its stream)
 */
export function createDynamoStore(options: DynamoStoreOptions): DefinedStore {
  const name = options.table ?? DEFAULT_TABLE;
  assertTableName(name);
  const table = tableOf(options.client, name, options.dueShards, options.readDueShards);
  const { due, ...claims } = dueClaims(table);
  const wakes = options.streams && dynamoWakeSource(options.client, name, options.streams);
  return defineStore(
    {
      name: 'dynamodb',
      isUnavailable,
      sizes: { asked: options.maxSnapshotBytes, fallback: DEFAULT_MAX_SNAPSHOT_BYTES },
      claimMs: options.claimMs,
    },
    {
      async setup() {
        await prepareTable(table.client, name, { ...options.setup, streams: wakes !== undefined });
        await ensureShardCount(table);
        await migrateLegacyDue(table);
      },
      ...items(table),
      due,
      page: (args) => (args.search ? searchPage(table, args, args.search) : plainPage(table, args, false)),
      searches: true,
      // The clients belong to the caller: only the subscriptions are the store's to end.
      close: async () => wakes?.closeAll(),
      claims,
      inbox: inbox(table),
      flow: dynamoFlow(table),
      stream: dynamoStream(table),
      ...(wakes ? { wakes: { subscribe: (listener) => wakes.subscribe(listener) } } : {}),
    },
  );
}
