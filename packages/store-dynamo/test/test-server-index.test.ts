// The test server (moto behind scripts/services/moto-server.py) answers a Query from a map of the
// index's partitions that every write keeps in step, instead of sorting the whole table. A stale
// entry there would make claims miss or repeat instances in every other test, so this checks the
// server itself: random puts, updates (in place, conditional, refused), removes and deletes, each
// followed by Queries compared with a model of what DynamoDB would answer.
import {
  CreateTableCommand,
  DeleteItemCommand,
  DeleteTableCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireServer, testClient } from './server.js';

const client = testClient();
const TABLE = `index_check_${process.pid}`;
const SHARDS = ['a', 'b', 'c'];
const IDS = ['i0', 'i1', 'i2', 'i3', 'i4', 'i5'];

type Row = { shard?: string; key?: string };
type Op =
  | { op: 'put'; id: string; row: Row }
  | { op: 'update'; id: string; row: Row; ifShard?: string | undefined }
  | { op: 'delete'; id: string };

const row = fc.record(
  { shard: fc.constantFrom(...SHARDS), key: fc.stringMatching(/^[0-9]{1,3}$/) },
  { requiredKeys: [] },
);
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('put' as const), id: fc.constantFrom(...IDS), row }),
  fc.record({
    op: fc.constant('update' as const),
    id: fc.constantFrom(...IDS),
    row,
    ifShard: fc.option(fc.constantFrom(...SHARDS), { nil: undefined }),
  }),
  fc.record({ op: fc.constant('delete' as const), id: fc.constantFrom(...IDS) }),
);

async function apply(o: Op, model: Map<string, Row>): Promise<void> {
  if (o.op === 'delete') {
    await client.send(new DeleteItemCommand({ TableName: TABLE, Key: { id: { S: o.id } } }));
    model.delete(o.id);
    return;
  }
  if (o.op === 'put') {
    const item: Record<string, { S: string }> = { id: { S: o.id } };
    if (o.row.shard) item['shard'] = { S: o.row.shard };
    if (o.row.key) item['key'] = { S: o.row.key };
    await client.send(new PutItemCommand({ TableName: TABLE, Item: item }));
    model.set(o.id, { ...o.row });
    return;
  }
  // UpdateItem sets the given attributes and removes the others, as a store's save does.
  const set: string[] = [];
  const remove: string[] = [];
  const values: Record<string, { S: string }> = {};
  for (const name of ['shard', 'key'] as const) {
    const v = o.row[name];
    if (v) {
      set.push(`#${name} = :${name}`);
      values[`:${name}`] = { S: v };
    } else remove.push(`#${name}`);
  }
  const expression = [
    set.length ? `SET ${set.join(', ')}` : '',
    remove.length ? `REMOVE ${remove.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  if (o.ifShard) values[':if'] = { S: o.ifShard };
  const current = model.get(o.id);
  const passes = o.ifShard === undefined || current?.shard === o.ifShard;
  try {
    await client.send(
      new UpdateItemCommand({
        TableName: TABLE,
        Key: { id: { S: o.id } },
        UpdateExpression: expression,
        ExpressionAttributeNames: { '#shard': 'shard', '#key': 'key' },
        ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
        ...(o.ifShard ? { ConditionExpression: '#shard = :if' } : {}),
      }),
    );
  } catch (e) {
    expect((e as Error).name).toBe('ConditionalCheckFailedException');
    expect(passes).toBe(false);
    return;
  }
  expect(passes).toBe(true);
  model.set(o.id, { ...o.row });
}

async function queried(shard: string, below?: string): Promise<string[]> {
  const out = await client.send(
    new QueryCommand({
      TableName: TABLE,
      IndexName: 'by-shard',
      KeyConditionExpression: below ? '#shard = :s AND #key < :k' : '#shard = :s',
      ExpressionAttributeNames: { '#shard': 'shard', ...(below ? { '#key': 'key' } : {}) },
      ExpressionAttributeValues: { ':s': { S: shard }, ...(below ? { ':k': { S: below } } : {}) },
    }),
  );
  return (out.Items ?? []).map((i) => i['id']!.S!);
}

function expected(model: Map<string, Row>, shard: string, below?: string): string[] {
  return [...model]
    .filter(([, r]) => r.shard === shard && r.key !== undefined && (below === undefined || r.key < below))
    .sort(([a, ra], [b, rb]) => (ra.key! < rb.key! ? -1 : ra.key! > rb.key! ? 1 : a < b ? -1 : a > b ? 1 : 0))
    .map(([id]) => id);
}

describe('the DynamoDB test server answers index Queries as DynamoDB', () => {
  beforeAll(async () => {
    await requireServer(client);
    await client.send(
      new CreateTableCommand({
        TableName: TABLE,
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        AttributeDefinitions: ['id', 'shard', 'key'].map((AttributeName) => ({
          AttributeName,
          AttributeType: 'S',
        })),
        GlobalSecondaryIndexes: [
          {
            IndexName: 'by-shard',
            KeySchema: [
              { AttributeName: 'shard', KeyType: 'HASH' },
              { AttributeName: 'key', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'KEYS_ONLY' },
          },
        ],
      }),
    );
  });
  afterAll(async () => {
    await client.send(new DeleteTableCommand({ TableName: TABLE }));
    client.destroy();
  });

  it('after any sequence of puts, updates, refused updates and deletes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), async (ops) => {
        const model = new Map<string, Row>();
        for (const id of IDS) await apply({ op: 'delete', id }, model);
        for (const o of ops) {
          await apply(o, model);
          for (const shard of SHARDS) {
            expect(await queried(shard)).toEqual(expected(model, shard));
            expect(await queried(shard, '5')).toEqual(expected(model, shard, '5'));
          }
        }
      }),
      { numRuns: 15 },
    );
  });
});
