import { type DynamoDBClient, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { DEFAULT_TABLE } from './dynamo-store.js';
import { dueShard, laneShard, sentShard, shardOf } from './encode.js';
import { Expr } from './expression.js';
import { conditional } from './map-error.js';
import { batchGet, type Item, pooled, type Table, updateItem } from './requests.js';
import { assertTableName, DUE_INDEX, SENT_INDEX } from './setup.js';
import { recordedShards, SETTINGS_ID, tableOf } from './shards.js';

/** Options of {@link reshardDue}. */
export interface ReshardDueOptions {
  /** The caller's client; never destroyed. */
  client: DynamoDBClient;
  /** The store's table (default `stepfold_instances`). */
  table?: string | undefined;
  /** The new count of due shards (1-64). */
  dueShards: number;
}

/** What {@link reshardDue} did. */
export interface ReshardDueResult {
  /** The count recorded before. */
  from: number;
  /** The count recorded now. */
  to: number;
  /** Index entries moved (an item with a wake time and waiting signals counts twice). */
  moved: number;
}

// Quiet passes in a row before the move counts as done: an index lags its table on AWS, so an
// entry written just before the first pass may show only in a later one.
const QUIET_PASSES = 2;
const PASS_PAUSE_MS = 250;

/**
 * Changes a table's `dueShards` while its stores keep working: moves every due, lane and inbox
 * index entry onto the shard its id hashes to under `dueShards`, each with an `UpdateItem`
 * conditional on the entry still being where the index showed it (a racing save, claim or delete
 * wins), then records the count in the table. Run it once every process polls the larger of the
 * old and new count (`readDueShards`) and writes with the smaller (see the README, "Changing
 * dueShards"); a store writing with a count it then leaves behind would put items where others
 * stop polling.
 *
 * @example
 * await reshardDue({ client, dueShards: 1 }); // from 8: every process has readDueShards: 8, dueShards: 1
 */
export async function reshardDue(options: ReshardDueOptions): Promise<ReshardDueResult> {
  const name = options.table ?? DEFAULT_TABLE;
  assertTableName(name);
  const probe = tableOf(options.client, name, options.dueShards, undefined);
  const from = await recordedShards(probe);
  if (!Number.isInteger(from))
    throw new Error(`DynamoDB table ${name} records no dueShards: run setup first`);
  const table = tableOf(options.client, name, options.dueShards, Math.max(from, probe.shards));
  let moved = 0;
  for (let quiet = 0; quiet < QUIET_PASSES; ) {
    const n = await movePass(table);
    moved += n;
    quiet = n === 0 ? quiet + 1 : 0;
    if (quiet < QUIET_PASSES) await new Promise((r) => setTimeout(r, PASS_PAUSE_MS));
  }
  const record = new UpdateItemCommand({
    TableName: name,
    Key: { id: { S: SETTINGS_ID } },
    UpdateExpression: 'SET #n = :to',
    ConditionExpression: '#n = :from',
    ExpressionAttributeNames: { '#n': 'dueShards' },
    ExpressionAttributeValues: { ':to': { N: String(table.shards) }, ':from': { N: String(from) } },
  });
  if (!(await conditional(options.client.send(record)))) {
    throw new Error(`DynamoDB table ${name}: dueShards changed while resharding; run reshardDue again`);
  }
  return { from, to: table.shards, moved };
}

/** One pass over every shard that may hold entries: the entries moved. */
async function movePass(table: Table): Promise<number> {
  let moved = 0;
  for (let k = 0; k < table.readShards; k++) {
    moved += await eachPage(table, DUE_INDEX, 'dueShard', k, (ids) => moveDue(table, ids, k));
    moved += await eachPage(table, SENT_INDEX, 'sentShard', k, (ids) => moveSent(table, ids, k));
  }
  return moved;
}

/** Pages through shard `k` of an index, handing each page's ids that belong on another shard to `move`. */
async function eachPage(
  table: Table,
  index: string,
  partition: 'dueShard' | 'sentShard',
  k: number,
  move: (ids: string[]) => Promise<number>,
): Promise<number> {
  const value = partition === 'dueShard' ? dueShard(k) : sentShard(k);
  let moved = 0;
  let start: Item | undefined;
  do {
    const out = await table.client.send(
      new QueryCommand({
        TableName: table.name,
        IndexName: index,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': partition },
        ExpressionAttributeValues: { ':pk': { S: value } },
        ExclusiveStartKey: start,
        Limit: 100,
      }),
    );
    const ids = (out.Items ?? []).flatMap((i) => i['id']?.S ?? []);
    const away = ids.filter((id) => shardOf(id, table.shards) !== k);
    if (away.length) moved += await move(away);
    start = out.LastEvaluatedKey;
  } while (start);
  return moved;
}

/** Moves items off due shard `k` (and their lane entries with them): the moves that won. */
async function moveDue(table: Table, ids: string[], k: number): Promise<number> {
  // The index holds keys only: the lane key needs the workflow name.
  const items = await batchGet(table, ids, ['workflow']);
  const won = await pooled([...items.values()], async (item) => {
    const id = item['id']?.S;
    const workflow = item['workflow']?.S;
    if (id === undefined || workflow === undefined) return false;
    const shard = shardOf(id, table.shards);
    const x = new Expr();
    const set = [
      `${x.n('dueShard')} = ${x.s(dueShard(shard))}`,
      `${x.n('laneShard')} = ${x.s(laneShard(workflow, shard))}`,
    ];
    const condition = `${x.n('dueShard')} = ${x.s(dueShard(k))}`;
    return (await updateItem(table, id, x, { set, condition })) !== null;
  });
  return won.filter(Boolean).length;
}

/** Moves items' inbox entries off sent shard `k`: the moves that won. */
async function moveSent(table: Table, ids: string[], k: number): Promise<number> {
  const won = await pooled(ids, async (id) => {
    const x = new Expr();
    const set = [`${x.n('sentShard')} = ${x.s(sentShard(shardOf(id, table.shards)))}`];
    const condition = `${x.n('sentShard')} = ${x.s(sentShard(k))}`;
    return (await updateItem(table, id, x, { set, condition })) !== null;
  });
  return won.filter(Boolean).length;
}
