import {
  BatchGetItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { StoreKit } from '@stepfold/engine';
import { dueShard, LEGACY_DUE_SHARD, laneShard, shardOf } from './encode.js';
import { isConditionFailed } from './map-error.js';
import { queryItems } from './query.js';
import { DUE_INDEX } from './setup.js';

/**
 * Id of the table's settings item. '#' is in no valid instance id, so no instance can collide with
 * it, `load`/`delete` refuse it, and it has none of the attributes the indexes are keyed on.
 */
export const SETTINGS_ID = '#stepfold';

// Items moved per migration page.
const MIGRATE_PAGE = 100;
// Pages in a row that moved nothing (index lag, throttled batch reads) before giving up.
const MAX_IDLE_PAGES = 40;

/**
 * Records `dueShards` in the table's settings item, or checks it against the one recorded: an item
 * lives on the shard its id hashes to under the count it was written with, so a store with another
 * count would miss instances. Throws a RangeError naming both counts on a mismatch.
 */
export async function ensureShardCount(
  client: DynamoDBClient,
  guard: StoreKit['guard'],
  table: string,
  shards: number,
): Promise<void> {
  try {
    await guard('setup', () =>
      client.send(
        new PutItemCommand({
          TableName: table,
          Item: { id: { S: SETTINGS_ID }, dueShards: { N: String(shards) } },
          ConditionExpression: 'attribute_not_exists(#id)',
          ExpressionAttributeNames: { '#id': 'id' },
        }),
      ),
    );
    return;
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
  }
  const out = await guard('setup', () =>
    client.send(
      new GetItemCommand({ TableName: table, Key: { id: { S: SETTINGS_ID } }, ConsistentRead: true }),
    ),
  );
  const recorded = Number(out.Item?.['dueShards']?.N);
  if (recorded !== shards) {
    throw new RangeError(
      `DynamoDB table ${table} was set up with dueShards ${recorded}; this store has ${shards}. ` +
        'Use the recorded count (changing it means rewriting every item with a wake time; see the README).',
    );
  }
}

/**
 * Moves items written by 0.1 (all on the one `due` partition, with no lane key) onto their shard
 * and lane. Each write is conditional on the item still being on the legacy partition, so a save
 * racing the migration wins and nothing is moved twice. A no-op Query once nothing is left.
 */
export async function migrateLegacyDue(
  client: DynamoDBClient,
  guard: StoreKit['guard'],
  table: string,
  shards: number,
): Promise<void> {
  for (let idle = 0; ; ) {
    const keys = await queryItems(
      client,
      guard,
      {
        TableName: table,
        IndexName: DUE_INDEX,
        KeyConditionExpression: '#pk = :legacy',
        ExpressionAttributeNames: { '#pk': 'dueShard' },
        ExpressionAttributeValues: { ':legacy': { S: LEGACY_DUE_SHARD } },
      },
      MIGRATE_PAGE,
      'setup',
    );
    if (keys.length === 0) return;
    // The index holds keys only: the workflow name comes from the items.
    const out = await guard('setup', () =>
      client.send(
        new BatchGetItemCommand({
          RequestItems: {
            [table]: {
              Keys: keys.flatMap((k) => (k['id'] ? [{ id: k['id'] }] : [])),
              ConsistentRead: true,
              ProjectionExpression: '#id, #wf',
              ExpressionAttributeNames: { '#id': 'id', '#wf': 'workflow' },
            },
          },
        }),
      ),
    );
    // Unprocessed keys stay on the legacy partition: the next page reads them again.
    let moved = 0;
    for (const item of out.Responses?.[table] ?? []) {
      const id = item['id']?.S;
      const workflow = item['workflow']?.S;
      if (id === undefined || workflow === undefined) continue;
      const shard = shardOf(id, shards);
      try {
        await guard('setup', () =>
          client.send(
            new UpdateItemCommand({
              TableName: table,
              Key: { id: { S: id } },
              UpdateExpression: 'SET #pk = :shard, #lane = :lane',
              ConditionExpression: '#pk = :legacy',
              ExpressionAttributeNames: { '#pk': 'dueShard', '#lane': 'laneShard' },
              ExpressionAttributeValues: {
                ':shard': { S: dueShard(shard) },
                ':lane': { S: laneShard(workflow, shard) },
                ':legacy': { S: LEGACY_DUE_SHARD },
              },
            }),
          ),
        );
        moved++;
      } catch (e) {
        if (!isConditionFailed(e)) throw e;
      }
    }
    if (moved > 0) idle = 0;
    else if (++idle > MAX_IDLE_PAGES) {
      throw new Error(`DynamoDB table ${table}: legacy due entries did not drain; run setup again`);
    }
    // On AWS the index lags the table: entries just moved (or deleted) may show once more.
    else await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
