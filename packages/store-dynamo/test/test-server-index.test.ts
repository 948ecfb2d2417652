// The test server (moto behind scripts/services/moto-server.py) answers a Query from a map of the
// index's partitions that every write keeps in step, instead of sorting the whole table. A stale
// entry there would make claims miss or repeat instances in every other test, so this checks the
// server itself: random puts, updates (in place, conditional, refused), removes and deletes, each
// followed by Queries (every kind of sort-key condition) compared with a model of what DynamoDB would answer.
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
  { shard: fc.constantFrom(...SHARDS), key: fc.constantFrom('1', '2', '5', '51', '7', '9') },
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

/** A sort-key condition of a Query, or none. */
type Range =
  | { op: '<' | '<=' | '>' | '>=' | '=' | 'BETWEEN' | 'BEGINS_WITH'; a: string; b: string }
  | undefined;
const RANGES: Range[] = [
  undefined,
  { op: '<', a: '5', b: '' },
  { op: '<=', a: '5', b: '' },
  { op: '>', a: '5', b: '' },
  { op: '>=', a: '5', b: '' },
  { op: '=', a: '5', b: '' },
  { op: 'BETWEEN', a: '2', b: '7' },
  { op: 'BEGINS_WITH', a: '1', b: '' },
];

async function queried(shard: string, range: Range): Promise<string[]> {
  const condition = !range
    ? ''
    : range.op === 'BETWEEN'
      ? ' AND #key BETWEEN :a AND :b'
      : range.op === 'BEGINS_WITH'
        ? ' AND begins_with(#key, :a)'
        : ` AND #key ${range.op} :a`;
  const out = await client.send(
    new QueryCommand({
      TableName: TABLE,
      IndexName: 'by-shard',
      KeyConditionExpression: `#shard = :s${condition}`,
      ExpressionAttributeNames: { '#shard': 'shard', ...(range ? { '#key': 'key' } : {}) },
      ExpressionAttributeValues: {
        ':s': { S: shard },
        ...(range ? { ':a': { S: range.a } } : {}),
        ...(range?.op === 'BETWEEN' ? { ':b': { S: range.b } } : {}),
      },
    }),
  );
  return (out.Items ?? []).map((i) => i['id']!.S!);
}

function meets(key: string, range: Range): boolean {
  if (!range) return true;
  const { op, a, b } = range;
  if (op === '<') return key < a;
  if (op === '<=') return key <= a;
  if (op === '>') return key > a;
  if (op === '>=') return key >= a;
  if (op === '=') return key === a;
  if (op === 'BETWEEN') return a <= key && key <= b;
  return key.startsWith(a);
}

function expected(model: Map<string, Row>, shard: string, range: Range): string[] {
  return [...model]
    .filter(([, r]) => r.shard === shard && r.key !== undefined && meets(r.key, range))
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
          for (const shard of SHARDS)
            for (const range of RANGES)
              expect(await queried(shard, range)).toEqual(expected(model, shard, range));
        }
      }),
      { numRuns: 10 },
    );
  });
});
