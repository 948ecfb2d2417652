// How the DynamoDB store keeps its search index: which requests each write sends, and the index
// items it leaves, including after the writes a condition refuses.
import { DeleteTableCommand, GetItemCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import {
  createStoreKit,
  isStepfoldError,
  makeTestSnapshot,
  type SearchValue,
  type Snapshot,
} from '@stepfold/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DUE_SHARDS, DEFAULT_MAX_SNAPSHOT_BYTES, toItem } from '../src/encode.js';
import { createDynamoStore, SEARCH_INDEX } from '../src/index.js';
import { searchKey } from '../src/search-key.js';
import { requireServer, testClient } from './server.js';

const client = testClient();
const table = `stepfold_search_writes_${process.pid}`;
// The commands the store sends, by name.
const commands: string[] = [];
client.middlewareStack.add(
  (next, context) => async (args) => {
    commands.push(context.commandName ?? '?');
    return next(args);
  },
  { step: 'initialize', name: 'recordCommands' },
);

const store = createDynamoStore({ client, table, setup: { pollMs: 50 } });

beforeAll(async () => {
  await requireServer(client);
  await store.setup();
});
afterAll(async () => {
  await client.send(new DeleteTableCommand({ TableName: table })).catch(() => {});
  client.destroy();
});

function snapshot(id: string, version: number, search?: Record<string, SearchValue>): Snapshot {
  return makeTestSnapshot(id, { version, ...(search ? { search } : {}) });
}

/** The commands `write` sends. */
async function sent(write: () => Promise<unknown>): Promise<string[]> {
  commands.length = 0;
  await write();
  return [...commands];
}

/** The index entries of `instance`, by attribute name: the keys the index holds. */
async function entries(instance: string, names: readonly string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const { Items } = await client.send(
      new QueryCommand({
        TableName: table,
        IndexName: SEARCH_INDEX,
        KeyConditionExpression: '#n = :n',
        ExpressionAttributeNames: { '#n': 'searchName' },
        ExpressionAttributeValues: { ':n': { S: name } },
      }),
    );
    for (const item of Items ?? []) {
      const key = item['searchKey']!.S!;
      if (key.endsWith(`\u0001${instance}`)) out[name] = key;
    }
  }
  return out;
}

const code = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (isStepfoldError(e) ? e.code : String(e)),
  );

describe('dynamo search index writes', () => {
  it('a create without values is one PutItem; with values, a transaction with an index item each', async () => {
    expect(await sent(() => store.create(snapshot('w-plain', 1)))).toEqual(['PutItemCommand']);
    expect(await sent(() => store.create(snapshot('w-1', 1, { customerId: '42', total: 5 })))).toEqual([
      'TransactWriteItemsCommand',
    ]);
    expect(await entries('w-1', ['customerId', 'total'])).toEqual({
      customerId: searchKey('42', 'w-1'),
      total: searchKey(5, 'w-1'),
    });
    // A taken id writes nothing, index items included.
    expect(await code(store.create(snapshot('w-1', 1, { customerId: '7', vip: true })))).toBe(
      'ALREADY_EXISTS',
    );
    expect(await entries('w-1', ['customerId', 'vip'])).toEqual({ customerId: searchKey('42', 'w-1') });
  });

  it('a save with the same values is one UpdateItem; a change is a refused UpdateItem and a transaction', async () => {
    await store.create(snapshot('w-2', 1, { customerId: '42', total: 5 }));
    // The same values in another order: the same `search` text.
    expect(await sent(() => store.save(snapshot('w-2', 2, { total: 5, customerId: '42' }), 1))).toEqual([
      'UpdateItemCommand',
    ]);
    expect(await sent(() => store.save(snapshot('w-2', 3, { customerId: '42', total: '5' }), 2))).toEqual([
      'UpdateItemCommand',
      'TransactWriteItemsCommand',
    ]);
    expect(await entries('w-2', ['customerId', 'total'])).toEqual({
      customerId: searchKey('42', 'w-2'),
      total: searchKey('5', 'w-2'),
    });
    await store.save(snapshot('w-2', 4, { vip: false }), 3);
    expect(await entries('w-2', ['customerId', 'total', 'vip'])).toEqual({ vip: searchKey(false, 'w-2') });
    await store.save(snapshot('w-2', 5), 4);
    expect(await entries('w-2', ['customerId', 'total', 'vip'])).toEqual({});
    const item = await client.send(new GetItemCommand({ TableName: table, Key: { id: { S: 'w-2' } } }));
    expect(item.Item?.['search']).toBeUndefined();
    expect((await store.list({ limit: 5, where: { vip: false } })).items).toEqual([]);
  });

  it('a refused save changes no index item, and learns the stored version from the refusal', async () => {
    await store.create(snapshot('w-3', 1, { customerId: '42' }));
    await store.save(snapshot('w-3', 2, { customerId: '42' }), 1);
    let result = '';
    const commandsSent = await sent(async () => {
      result = await code(store.save(snapshot('w-3', 3, { customerId: '7' }), 1));
    });
    expect(result).toBe('VERSION_CONFLICT');
    expect(commandsSent).toEqual(['UpdateItemCommand']);
    expect(await code(store.save(snapshot('nobody', 2, { customerId: '7' }), 1))).toBe('NOT_FOUND');
    // A save that must match another snapshot than the stored one.
    const other = snapshot('w-3', 2, { customerId: 'x' });
    expect(await code(store.save(snapshot('w-3', 3, { customerId: '7' }), 2, { matches: other }))).toBe(
      'NOTICE_MISMATCH',
    );
    expect(await entries('w-3', ['customerId'])).toEqual({ customerId: searchKey('42', 'w-3') });
    expect((await store.load('w-3'))?.version).toBe(2);
  });

  it('a delete takes the index items with the instance; a refused one leaves both', async () => {
    await store.create(snapshot('w-4', 1, { customerId: '42', total: 1 }));
    expect(await code(store.delete('w-4', { version: 2 }))).toBe('VERSION_CONFLICT');
    expect(await entries('w-4', ['customerId', 'total'])).toEqual({
      customerId: searchKey('42', 'w-4'),
      total: searchKey(1, 'w-4'),
    });
    // Besides the read of what the instance holds (flow slots) and the removal of its stream.
    const writes = (names: string[]) =>
      names.filter((n) => n === 'DeleteItemCommand' || n.startsWith('Transact'));
    expect(writes(await sent(() => store.delete('w-4', { version: 1 })))).toEqual([
      'DeleteItemCommand',
      'TransactWriteItemsCommand',
    ]);
    expect(await entries('w-4', ['customerId', 'total'])).toEqual({});
    expect(await store.delete('w-4')).toBe(false);
    await store.create(snapshot('w-5', 1));
    expect(writes(await sent(() => store.delete('w-5', { version: 1 })))).toEqual(['DeleteItemCommand']);
  });

  it('an item written without the search attribute is indexed at its next save', async () => {
    const old = snapshot('w-6', 1, { customerId: '42' });
    const kit = createStoreKit('dynamodb', () => false, {
      asked: undefined,
      fallback: DEFAULT_MAX_SNAPSHOT_BYTES,
    });
    const { search: _none, ...item } = toItem(kit.encode(old), DEFAULT_DUE_SHARDS);
    await client.send(new PutItemCommand({ TableName: table, Item: item }));
    expect(
      (await store.list({ limit: 5, where: { customerId: '42' } })).items.map((s) => s.id),
    ).not.toContain('w-6');
    await store.save(snapshot('w-6', 2, { customerId: '42' }), 1);
    expect(
      (await store.list({ limit: 5, where: { customerId: '42', status: 'running' } })).items.map((s) => s.id),
    ).toContain('w-6');
  });
});
