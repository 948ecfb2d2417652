import {
  type AttributeValue,
  BatchGetItemCommand,
  type BatchGetItemCommandInput,
  type BatchGetItemCommandOutput,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  type QueryCommandInput,
} from '@aws-sdk/client-dynamodb';
import { createStoreKit, type ListPage, type ListQuery, type Snapshot, type Store } from '@stepfold/engine';
import { claimDue, claimMsOf, type DueContext, releaseClaims } from './due.js';
import { DEFAULT_MAX_SNAPSHOT_BYTES, dueShardsOf, jsonOf, LIST_SHARD, toItem } from './encode.js';
import { isConditionFailed, isUnavailable } from './map-error.js';
import { queryItems } from './query.js';
import {
  assertTableName,
  type EnsureTableOptions,
  ensureTable,
  LIST_INDEX,
  STATUS_INDEX,
  WORKFLOW_INDEX,
} from './setup.js';
import { ensureShardCount, migrateLegacyDue } from './shards.js';

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
  /** How long ids returned by `listDue` stay claimed, in ms against its `now`, when the call sets no `leaseMs` (default 30 000). */
  claimMs?: number | undefined;
  /**
   * Partitions the due index and each workflow's lane are spread over (default 8, 1-64); `listDue`
   * queries them all. Recorded in the table by `setup`, which refuses a store with another count.
   */
  dueShards?: number | undefined;
}

const BATCH_GET_MAX = 100;

/**
 * A stepfold store on DynamoDB. One item per instance keyed by `id`; creates and saves are PutItems
 * conditional on `attribute_not_exists(id)` and on the stored version; due instances and listings are
 * Queries on global secondary indexes, never Scans.
 */
export function createDynamoStore(options: DynamoStoreOptions): Store {
  const { client } = options;
  const table = options.table ?? DEFAULT_TABLE;
  assertTableName(table);
  const kit = createStoreKit('dynamodb', isUnavailable, {
    asked: options.maxSnapshotBytes,
    fallback: DEFAULT_MAX_SNAPSHOT_BYTES,
  });
  const { guard } = kit;
  const claimMs = claimMsOf(options.claimMs);
  const shards = dueShardsOf(options.dueShards);
  const due: DueContext = { client, guard, table, shards };

  const currentVersion = async (id: string): Promise<number | null> => {
    const out = await guard('save', () =>
      client.send(
        new GetItemCommand({
          TableName: table,
          Key: { id: { S: id } },
          ConsistentRead: true,
          ProjectionExpression: '#v',
          ExpressionAttributeNames: { '#v': 'version' },
        }),
      ),
    );
    const v = out.Item?.['version']?.N;
    return v === undefined ? null : Number(v);
  };

  // Reads full snapshots for ids found on an index, in the order given, skipping ids deleted meanwhile.
  const fetchAll = async (ids: string[]): Promise<Snapshot[]> => {
    const found = new Map<string, Snapshot>();
    for (let i = 0; i < ids.length; i += BATCH_GET_MAX) {
      let keys: Record<string, AttributeValue>[] | undefined = ids
        .slice(i, i + BATCH_GET_MAX)
        .map((id) => ({ id: { S: id } }));
      for (let round = 0; keys?.length; round++) {
        if (round > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** round)));
        const request: BatchGetItemCommandInput = {
          RequestItems: {
            [table]: {
              Keys: keys,
              ConsistentRead: true,
              ProjectionExpression: '#s',
              ExpressionAttributeNames: { '#s': 'snapshot' },
            },
          },
        };
        const out: BatchGetItemCommandOutput = await guard('list', () =>
          client.send(new BatchGetItemCommand(request)),
        );
        for (const item of out.Responses?.[table] ?? []) {
          const s = kit.decode(jsonOf(item));
          found.set(s.id, s);
        }
        keys = out.UnprocessedKeys?.[table]?.Keys;
      }
    }
    return ids.flatMap((id) => found.get(id) ?? []);
  };

  const queryIds = async (input: QueryCommandInput, want: number, what: string): Promise<string[]> =>
    (await queryItems(client, guard, input, want, what)).flatMap((item) => item['id']?.S ?? []);

  return {
    maxSnapshotBytes: kit.maxSnapshotBytes,
    claimsDue: true,

    async setup() {
      await ensureTable(client, table, options.setup);
      await ensureShardCount(client, guard, table, shards);
      await migrateLegacyDue(client, guard, table, shards);
    },

    async create(snapshot) {
      const item = toItem(kit.encode(snapshot), shards);
      try {
        await guard('create', () =>
          client.send(
            new PutItemCommand({
              TableName: table,
              Item: item,
              ConditionExpression: 'attribute_not_exists(#id)',
              ExpressionAttributeNames: { '#id': 'id' },
            }),
          ),
        );
      } catch (e) {
        if (!isConditionFailed(e)) throw e;
        kit.created(false, snapshot.id);
      }
    },

    async load(id) {
      const out = await guard('load', () =>
        client.send(
          new GetItemCommand({
            TableName: table,
            Key: { id: { S: kit.id(id) } },
            ConsistentRead: true,
            ProjectionExpression: '#s',
            ExpressionAttributeNames: { '#s': 'snapshot' },
          }),
        ),
      );
      return out.Item ? kit.decode(jsonOf(out.Item)) : null;
    },

    async save(snapshot, expectedVersion) {
      const item = toItem(kit.encode(snapshot), shards);
      try {
        await guard('save', () =>
          client.send(
            new PutItemCommand({
              TableName: table,
              Item: item,
              ConditionExpression: '#v = :expected',
              ExpressionAttributeNames: { '#v': 'version' },
              ExpressionAttributeValues: { ':expected': { N: String(expectedVersion) } },
            }),
          ),
        );
      } catch (e) {
        if (!isConditionFailed(e)) throw e;
        // The condition failed: tell a lost race from a missing instance.
        const actual = await currentVersion(snapshot.id);
        kit.updated(actual === null ? 'missing' : { stored: actual }, snapshot.id, expectedVersion);
      }
    },

    async listDue(now, limit, query) {
      const n = kit.dueLimit(now, limit);
      const workflow = kit.dueWorkflow(query);
      // Checked before the early returns: a bad lease is refused whatever else the call asks.
      const leaseMs = kit.dueLease(query, claimMs);
      if (n === null || workflow === null) return [];
      return claimDue(due, { now, limit: n, workflow, leaseMs });
    },

    releaseDue: (ids) => releaseClaims(due, ids),

    async list(query: ListQuery): Promise<ListPage> {
      const args = kit.listArgs(query);
      if (!args) return { items: [], cursor: query.cursor || null };
      const { status, workflow, cursor, limit } = args;
      // Pick the index whose partition is the filter; a status+workflow filter reads the status
      // partition and filters on the projected workflow.
      const names: Record<string, string> = { '#id': 'id' };
      const values: Record<string, AttributeValue> = {};
      let index = LIST_INDEX;
      let filter: string | undefined;
      if (status) {
        index = STATUS_INDEX;
        names['#pk'] = 'status';
        values[':pk'] = { S: status };
        if (workflow) {
          names['#wf'] = 'workflow';
          values[':wf'] = { S: workflow };
          filter = '#wf = :wf';
        }
      } else if (workflow) {
        index = WORKFLOW_INDEX;
        names['#pk'] = 'workflow';
        values[':pk'] = { S: workflow };
      } else {
        names['#pk'] = 'listShard';
        values[':pk'] = { S: LIST_SHARD };
      }
      let condition = '#pk = :pk';
      if (cursor) {
        condition += ' AND #id > :cursor';
        values[':cursor'] = { S: cursor };
      }
      // One extra key tells whether another page exists.
      const ids = await queryIds(
        {
          TableName: table,
          IndexName: index,
          KeyConditionExpression: condition,
          FilterExpression: filter,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ProjectionExpression: '#id',
        },
        limit + 1,
        'list',
      );
      const page = ids.slice(0, limit);
      // Indexes are eventually consistent on DynamoDB: re-check the filter on the item itself.
      const items = (await fetchAll(page)).filter(
        (s) => (!status || s.status === status) && (!workflow || s.workflow.name === workflow),
      );
      return { items, cursor: ids.length > limit ? (page[page.length - 1] ?? null) : null };
    },

    async delete(id) {
      kit.id(id);
      try {
        await guard('delete', () =>
          client.send(
            new DeleteItemCommand({
              TableName: table,
              Key: { id: { S: id } },
              ConditionExpression: 'attribute_exists(#id)',
              ExpressionAttributeNames: { '#id': 'id' },
            }),
          ),
        );
        return true;
      } catch (e) {
        if (isConditionFailed(e)) return false;
        throw e;
      }
    },

    async close() {
      // The DynamoDBClient belongs to the caller.
    },
  };
}
