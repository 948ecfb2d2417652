import { type DynamoDBClient, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { dueShard, dueShardsOf, LEGACY_DUE_SHARD, laneShard, shardOf } from './encode.js';
import { conditional } from './map-error.js';
import { batchGet, getItem, queryItems, type Table } from './requests.js';
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

/** The table a store works on: writes with `dueShards`, polls `readDueShards` (at least as many). */
export function tableOf(
  client: DynamoDBClient,
  name: string,
  dueShards: number | undefined,
  readDueShards: number | undefined,
): Table {
  const shards = dueShardsOf(dueShards);
  const read = readDueShards === undefined ? shards : dueShardsOf(readDueShards, 'readDueShards');
  return { client, name, shards, readShards: Math.max(shards, read) };
}

/** The `dueShards` recorded in the table's settings item (NaN when it has none). */
export async function recordedShards(table: Table): Promise<number> {
  return Number((await getItem(table, SETTINGS_ID))?.['dueShards']?.N);
}

/**
 * Records `dueShards` in the table's settings item, or checks the store against the one recorded:
 * the count items may be spread over. An item lives on the shard its id hashes to under the count
 * it was written with, so a store that would poll fewer shards would miss instances, and one that
 * writes over more would put some where other stores do not poll. Throws a RangeError naming both.
 * Only {@link reshardDue} changes the recorded count.
 */
export async function ensureShardCount(table: Table): Promise<void> {
  const { client, name, shards, readShards } = table;
  const put = new PutItemCommand({
    TableName: name,
    Item: { id: { S: SETTINGS_ID }, dueShards: { N: String(shards) } },
    ConditionExpression: 'attribute_not_exists(#id)',
    ExpressionAttributeNames: { '#id': 'id' },
  });
  if (await conditional(client.send(put))) return;
  const recorded = await recordedShards(table);
  if (!(Number.isInteger(recorded) && readShards >= recorded && shards <= recorded)) {
    const reads = readShards === shards ? '' : ` (polling ${readShards})`;
    throw new RangeError(
      `DynamoDB table ${name} was set up with dueShards ${recorded}; this store has ${shards}${reads}. ` +
        `Pass dueShards: ${recorded} to keep its layout, or change it online with readDueShards and ` +
        'reshardDue (see the README, "Changing dueShards").',
    );
  }
}

/**
 * Moves items written by 0.1 (all on the one `due` partition, with no lane key) onto their shard
 * and lane. Each write is conditional on the item still being on the legacy partition, so a save
 * racing the migration wins and nothing is moved twice. A no-op Query once nothing is left.
 */
export async function migrateLegacyDue(table: Table): Promise<void> {
  const { client, name, shards } = table;
  for (let idle = 0; ; ) {
    const keys = await queryItems(
      client,
      {
        TableName: name,
        IndexName: DUE_INDEX,
        KeyConditionExpression: '#pk = :legacy',
        ExpressionAttributeNames: { '#pk': 'dueShard' },
        ExpressionAttributeValues: { ':legacy': { S: LEGACY_DUE_SHARD } },
      },
      MIGRATE_PAGE,
    );
    if (keys.length === 0) return;
    // The index holds keys only: the workflow name comes from the items.
    const items = await batchGet(
      table,
      keys.flatMap((k) => k['id']?.S ?? []),
      ['workflow'],
    );
    let moved = 0;
    for (const item of items.values()) {
      const id = item['id']?.S;
      const workflow = item['workflow']?.S;
      if (id === undefined || workflow === undefined) continue;
      const shard = shardOf(id, shards);
      const move = new UpdateItemCommand({
        TableName: name,
        Key: { id: { S: id } },
        UpdateExpression: 'SET #pk = :shard, #lane = :lane',
        ConditionExpression: '#pk = :legacy',
        ExpressionAttributeNames: { '#pk': 'dueShard', '#lane': 'laneShard' },
        ExpressionAttributeValues: {
          ':shard': { S: dueShard(shard) },
          ':lane': { S: laneShard(workflow, shard) },
          ':legacy': { S: LEGACY_DUE_SHARD },
        },
      });
      if (await conditional(client.send(move))) moved++;
    }
    if (moved > 0) idle = 0;
    else if (++idle > MAX_IDLE_PAGES) {
      throw new Error(`DynamoDB table ${name}: legacy due entries did not drain; run setup again`);
    }
    // On AWS the index lags the table: entries just moved (or deleted) may show once more.
    else await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
