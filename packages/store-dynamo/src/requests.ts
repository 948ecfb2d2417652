import {
  type AttributeValue,
  BatchGetItemCommand,
  type BatchGetItemCommandOutput,
  type DynamoDBClient,
  GetItemCommand,
  QueryCommand,
  type QueryCommandInput,
  UpdateItemCommand,
  type UpdateItemCommandOutput,
} from '@aws-sdk/client-dynamodb';
import { type Expr, updateExpression } from './expression.js';
import { conditional, isConditionFailed } from './map-error.js';
import { NOTE_ATTRIBUTE, type Note } from './stream-notice.js';

/** The table the driver's calls go to. */
export interface Table {
  client: DynamoDBClient;
  name: string;
  /** Partitions of the due, lane and sent indexes an item is written to (the `dueShards` option). */
  shards: number;
  /** Partitions polls query, at least `shards` (more while a change of the count rolls out: `readDueShards`). */
  readShards: number;
}

/** One item (or index entry) as DynamoDB returns it. */
export type Item = Record<string, AttributeValue>;

// Conditional writes in flight at once per call (the SDK's socket pool queues the rest anyway).
const CONCURRENCY = 25;
const BATCH_GET_MAX = 100;

/** Runs `fn` over `items`, at most 25 at a time, keeping the order of the results. */
export async function pooled<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += CONCURRENCY)
    out.push(...(await Promise.all(items.slice(i, i + CONCURRENCY).map(fn))));
  return out;
}

/**
 * Pages through a Query until `want` items matched or the index is exhausted. Without a filter
 * each page asks for just the items still wanted; with one (or an infinite `want`), DynamoDB's
 * page size applies.
 */
export async function queryItems(
  client: DynamoDBClient,
  input: QueryCommandInput,
  want: number,
): Promise<Item[]> {
  const items: Item[] = [];
  let start: Item | undefined;
  do {
    const out = await client.send(
      new QueryCommand({
        ...input,
        ...(input.FilterExpression || want === Number.POSITIVE_INFINITY
          ? {}
          : { Limit: want - items.length }),
        ExclusiveStartKey: start,
      }),
    );
    for (const item of out.Items ?? []) if (items.length < want) items.push(item);
    start = out.LastEvaluatedKey;
  } while (start && items.length < want);
  return items;
}

/**
 * Consistent reads of the items `ids` name, `attrs` of each (and `id`), by id; ids deleted
 * meanwhile are absent. Keys DynamoDB leaves unprocessed are asked again with backoff.
 */
export async function batchGet(
  table: Table,
  ids: readonly string[],
  attrs: readonly string[],
): Promise<Map<string, Item>> {
  const found = new Map<string, Item>();
  const names = Object.fromEntries(['id', ...attrs].map((a) => [`#${a}`, a]));
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += BATCH_GET_MAX) {
    let keys: Item[] | undefined = unique.slice(i, i + BATCH_GET_MAX).map((id) => ({ id: { S: id } }));
    for (let round = 0; keys?.length; round++) {
      if (round > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** round)));
      const out: BatchGetItemCommandOutput = await table.client.send(
        new BatchGetItemCommand({
          RequestItems: {
            [table.name]: {
              Keys: keys,
              ConsistentRead: true,
              ProjectionExpression: Object.keys(names).join(', '),
              ExpressionAttributeNames: names,
            },
          },
        }),
      );
      for (const item of out.Responses?.[table.name] ?? []) if (item['id']?.S) found.set(item['id'].S, item);
      keys = out.UnprocessedKeys?.[table.name]?.Keys;
    }
  }
  return found;
}

/** A consistent read of `attrs` of one item (all of them when none are named), or undefined when it does not exist. */
export async function getItem(
  table: Table,
  id: string,
  attrs: readonly string[] = [],
): Promise<Item | undefined> {
  const out = await table.client.send(
    new GetItemCommand({
      TableName: table.name,
      Key: { id: { S: id } },
      ConsistentRead: true,
      ...(attrs.length
        ? {
            ProjectionExpression: attrs.map((a) => `#${a}`).join(', '),
            ExpressionAttributeNames: Object.fromEntries(attrs.map((a) => [`#${a}`, a])),
          }
        : {}),
    }),
  );
  return out.Item;
}

/** The clauses of an {@link updateItem}, their placeholders from one `Expr`. */
export interface Update {
  set?: readonly string[];
  remove?: readonly string[];
  condition: string;
  /** What to return of the item: as written, as it was, or the old values of what changed. */
  returns?: 'ALL_NEW' | 'ALL_OLD' | 'UPDATED_OLD';
  /** What this write announces on the table's stream; without it the write removes any note (see {@link NOTE_ATTRIBUTE}). */
  note?: Note | undefined;
  /** Given the item as it was when the condition refused the write (DynamoDB returns it: no read). */
  onRefused?: ((item: Item | undefined) => void) | undefined;
}

/**
 * One UpdateItem on the item `id` (see {@link updateInput}): its output, or null when DynamoDB
 * refused it for its condition (or for `refused`).
 */
export function updateItem(
  table: Table,
  id: string,
  x: Expr,
  u: Update,
  refused?: (e: unknown) => boolean,
): Promise<UpdateItemCommandOutput | null> {
  const update = new UpdateItemCommand({
    ...updateInput(table, id, x, u),
    ...(u.returns ? { ReturnValues: u.returns } : {}),
    ...(u.onRefused ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
  });
  const sent = table.client.send(update);
  const { onRefused } = u;
  if (!onRefused) return conditional(sent, refused);
  return conditional(
    sent.catch((e: unknown) => {
      if (isConditionFailed(e)) onRefused((e as { Item?: Item }).Item);
      throw e;
    }),
    refused,
  );
}

/**
 * The request of an {@link updateItem} without what it returns: also an `Update` of a transaction.
 * Sets the write's stream note, or removes the last write's: a claim's record must not announce
 * again what the save before it did.
 */
export function updateInput(table: Table, id: string, x: Expr, u: Update) {
  const set = [...(u.set ?? [])];
  const remove = [...(u.remove ?? [])];
  if (u.note === undefined) remove.push(x.n(NOTE_ATTRIBUTE));
  else set.push(`${x.n(NOTE_ATTRIBUTE)} = ${x.s(u.note)}`);
  return {
    TableName: table.name,
    Key: { id: { S: id } },
    UpdateExpression: updateExpression(set, remove),
    ConditionExpression: u.condition,
    ...x.fields,
  };
}
