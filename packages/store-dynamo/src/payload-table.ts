import {
  BatchWriteItemCommand,
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  type DynamoDBClient,
  QueryCommand,
  type TableDescription,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { StoreUnavailableError } from '@stepfold/engine';
import { type Item, pooled } from './requests.js';
import type { EnsureTableOptions } from './setup.js';

// The payload table's layout: partition key `o` (the owner), sort key `k`. A payload is a head
// item `h#<sha256>` (its size, its chunk count, and the body itself when it fits) plus, for a
// larger body, chunk items `c#<sha256>#<index>` of its UTF-8 bytes. Heads and chunks sort apart,
// so listing reads heads only.

/** Most UTF-8 bytes of body one item carries: an item holds 400 KB with its keys and names. */
export const PAYLOAD_CHUNK_BYTES = 350 * 1024;

/** The sort key of a payload's head item. */
export const headKey = (sha256: string): string => `h#${sha256}`;

/** The sort key prefix of a payload's chunk items. */
export const chunkPrefix = (sha256: string): string => `c#${sha256}#`;

/** The sort key of chunk `index` (zero-padded, so chunks sort in order). */
export const chunkKey = (sha256: string, index: number): string =>
  `${chunkPrefix(sha256)}${String(index).padStart(4, '0')}`;

/** The key of item `k` of `owner`. */
export const itemKey = (owner: string, k: string): Item => ({ o: { S: owner }, k: { S: k } });

/**
 * Items of `owner` whose sort key starts with `prefix`, after `start` (a sort key), keys only
 * unless `full`: all of them, or the first `limit`. Pages until done (a page holds 1 MB).
 */
export async function queryItems(
  client: DynamoDBClient,
  table: string,
  owner: string,
  prefix: string,
  o: { full?: boolean; start?: string | undefined; limit?: number } = {},
): Promise<Item[]> {
  const items: Item[] = [];
  let start: Item | undefined = o.start === undefined ? undefined : itemKey(owner, o.start);
  do {
    const want = o.limit === undefined ? undefined : o.limit - items.length;
    const out = await client.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'o = :o AND begins_with(k, :p)',
        ExpressionAttributeValues: { ':o': { S: owner }, ':p': { S: prefix } },
        ConsistentRead: true,
        ...(o.full ? {} : { ProjectionExpression: 'k' }),
        ...(want === undefined ? {} : { Limit: want }),
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start && (o.limit === undefined || items.length < o.limit));
  return items;
}

/** The CreateTable request the payload store's `setup` sends (on-demand billing), for infrastructure-as-code. */
export function payloadTableDefinition(table: string): CreateTableCommandInput {
  return {
    TableName: table,
    BillingMode: 'PAY_PER_REQUEST',
    KeySchema: [
      { AttributeName: 'o', KeyType: 'HASH' },
      { AttributeName: 'k', KeyType: 'RANGE' },
    ],
    AttributeDefinitions: [
      { AttributeName: 'o', AttributeType: 'S' },
      { AttributeName: 'k', AttributeType: 'S' },
    ],
  };
}

async function describe(client: DynamoDBClient, table: string): Promise<TableDescription | null> {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: table }))).Table ?? null;
  } catch (e) {
    if ((e as { name?: unknown })?.name === 'ResourceNotFoundException') return null;
    throw e;
  }
}

/** Creates the payload table unless it exists, then waits until it is ACTIVE; refuses a table keyed otherwise. */
export async function preparePayloadTable(
  client: DynamoDBClient,
  table: string,
  options: EnsureTableOptions,
): Promise<void> {
  if (!(await describe(client, table))) {
    try {
      await client.send(new CreateTableCommand(payloadTableDefinition(table)));
    } catch (e) {
      // Another process created it between our describe and create.
      if ((e as { name?: unknown })?.name !== 'ResourceInUseException') throw e;
    }
  }
  const deadline = Date.now() + (options.timeoutMs ?? 5 * 60_000);
  let current = await describe(client, table);
  while (current?.TableStatus !== 'ACTIVE') {
    if (Date.now() > deadline) throw new Error(`DynamoDB table ${table} did not become ACTIVE in time`);
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 250));
    current = await describe(client, table);
  }
  const keys = (current.KeySchema ?? []).map((k) => `${k.AttributeName}:${k.KeyType}`).join(',');
  if (keys !== 'o:HASH,k:RANGE')
    throw new Error(`DynamoDB table ${table} exists but is not a payload table (keys ${keys})`);
}

// A batch holds at most 25 writes; 25 chunks stay well under its 16 MB.
const BATCH = 25;
// Rounds of retrying what DynamoDB left unprocessed (throttled) before giving up as unavailable.
const BATCH_ROUNDS = 8;

/** Writes (puts or deletes) in batches of 25, retrying unprocessed ones with backoff. */
export async function batchWrite(
  client: DynamoDBClient,
  table: string,
  writes: WriteRequest[],
): Promise<void> {
  const batches: WriteRequest[][] = [];
  for (let i = 0; i < writes.length; i += BATCH) batches.push(writes.slice(i, i + BATCH));
  // At most 25 batches in flight: collecting a large owner should not throttle itself.
  await pooled(batches, async (batch) => {
    let pending = batch;
    for (let round = 0; pending.length; round++) {
      if (round === BATCH_ROUNDS)
        throw new StoreUnavailableError(`dynamodb payloads: ${pending.length} writes stayed unprocessed`);
      if (round) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** round));
      const out = await client.send(new BatchWriteItemCommand({ RequestItems: { [table]: pending } }));
      pending = out.UnprocessedItems?.[table] ?? [];
    }
  });
}

/** Delete requests for the given keys of `owner`. */
export const deletesOf = (owner: string, keys: readonly string[]): WriteRequest[] =>
  keys.map((k) => ({ DeleteRequest: { Key: itemKey(owner, k) } }));

/** The sort keys of items as a keys-only Query returned them. */
export const sortKeys = (items: readonly Item[]): string[] =>
  items.flatMap((i) => (i['k']?.S ? [i['k'].S] : []));
