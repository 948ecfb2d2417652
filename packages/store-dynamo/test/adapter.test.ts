import { DeleteTableCommand, DescribeTableCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { MAX_ID_LENGTH, makeTestSnapshot, type Snapshot, snapshotBytes } from '@stepfold/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDynamoStore,
  DEFAULT_DUE_SHARDS,
  DEFAULT_MAX_SNAPSHOT_BYTES,
  DYNAMO_ITEM_LIMIT,
  shardOf,
} from '../src/index.js';
import { requireServer, testClient } from './server.js';

const client = testClient();
const table = `stepfold_adapter_${process.pid}`;
// The commands the store sends, by name.
const commands: string[] = [];
client.middlewareStack.add(
  (next, context) => async (args) => {
    commands.push(context.commandName ?? '?');
    return next(args);
  },
  { step: 'initialize', name: 'recordCommands' },
);

beforeAll(() => requireServer(client));
afterAll(async () => {
  await client.send(new DeleteTableCommand({ TableName: table })).catch(() => {});
  client.destroy();
});

function snapshot(id: string, patch: Partial<Snapshot> = {}): Snapshot {
  return makeTestSnapshot(id, { workflow: { name: 'wf', version: 1, hash: 'h' }, ...patch });
}

/** A snapshot whose JSON is exactly `bytes` long. */
function sized(base: Snapshot, bytes: number): Snapshot {
  const empty = snapshotBytes(JSON.stringify({ ...base, input: '' }));
  return { ...base, input: 'x'.repeat(bytes - empty) };
}

describe('dynamo adapter specifics', () => {
  const store = createDynamoStore({ client, table, setup: { pollMs: 50 } });

  it('setup creates the table with its seven indexes and is safe to run again', async () => {
    await Promise.all([store.setup(), store.setup()]);
    await store.setup();
    const { Table } = await client.send(new DescribeTableCommand({ TableName: table }));
    expect(Table?.TableStatus).toBe('ACTIVE');
    expect((Table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName).sort()).toEqual([
      'due-index',
      'lane-index',
      'list-index',
      'search-index',
      'sent-index',
      'status-index',
      'workflow-index',
    ]);
  });

  it('puts an instance on the due index only while it has a wake time', async () => {
    const item = async (id: string) =>
      (
        await client.send(
          new GetItemCommand({ TableName: table, Key: { id: { S: id } }, ConsistentRead: true }),
        )
      ).Item;
    await store.create(snapshot('due-1', { wakeAt: 1000 }));
    expect(await item('due-1')).toMatchObject({
      wakeAt: { N: '1000' },
      dueShard: { S: `due#${shardOf('due-1', DEFAULT_DUE_SHARDS)}` },
      laneShard: { S: `wf#${shardOf('due-1', DEFAULT_DUE_SHARDS)}` },
    });
    expect(await store.listDue(1000, 10)).toContain('due-1');
    await store.save(snapshot('due-1', { version: 2, wakeAt: null }), 1);
    const after = await item('due-1');
    expect(after?.wakeAt).toBeUndefined();
    expect(after?.dueShard).toBeUndefined();
    expect(after?.laneShard).toBeUndefined();
    expect(await store.listDue(Number.MAX_SAFE_INTEGER, 10)).not.toContain('due-1');
  });

  it('claimDue of as many named instances as asked for is one conditional UpdateItem each, no read', async () => {
    await store.create(snapshot('named-1', { wakeAt: 7 }));
    await store.create(snapshot('named-2', { wakeAt: 3 }));
    commands.length = 0;
    const got = await store.claims!.claimDue(10, 5, { ids: ['named-1', 'named-2', 'named-none'] });
    expect(got.map((s) => [s.id, s.wakeAt])).toEqual([
      ['named-2', 3],
      ['named-1', 7],
    ]);
    expect(commands).toEqual(['UpdateItemCommand', 'UpdateItemCommand', 'UpdateItemCommand']);
    expect(await store.claims!.claimDue(10, 5, { ids: ['named-1'] })).toEqual([]);
    // Not due yet, or another lane: not claimed.
    await store.claims!.release(['named-1', 'named-2']);
    expect(await store.claims!.claimDue(5, 5, { ids: ['named-1'] })).toEqual([]);
    expect(await store.claims!.claimDue(10, 5, { ids: ['named-1'], workflow: 'other' })).toEqual([]);
    expect(
      (await store.claims!.claimDue(10, 1, { ids: ['named-1'], workflow: 'wf' })).map((s) => s.id),
    ).toEqual(['named-1']);
    expect(await store.load('named-none')).toBeNull();
  });

  it('orders due instances by wake time, negative and fractional ones included, then by id', async () => {
    await store.create(snapshot('order-b', { wakeAt: -5 }));
    await store.create(snapshot('order-a', { wakeAt: -5 }));
    await store.create(snapshot('order-c', { wakeAt: 0.5 }));
    await store.create(snapshot('order-d', { wakeAt: 1 }));
    const due = (await store.listDue(0.5, 100)).filter((id) => id.startsWith('order-'));
    expect(due).toEqual(['order-a', 'order-b', 'order-c']);
  });

  it('round-trips payload keys that are special elsewhere', async () => {
    const input = JSON.parse('{"$set":{"version":99},"a.b":1,"__proto__":{"polluted":true},"#id":":v"}');
    await store.create(snapshot('hostile-keys', { input }));
    const loaded = await store.load('hostile-keys');
    expect(JSON.stringify(loaded?.input)).toBe(JSON.stringify(input));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('fits a maximal snapshot with the longest id and workflow name in one 400 KB item, claimed', async () => {
    const id = 'i'.repeat(MAX_ID_LENGTH);
    const base = snapshot(id, {
      version: 2 ** 52,
      wakeAt: 1e13 + 0.123456789,
      workflow: { name: 'w'.repeat(MAX_ID_LENGTH), version: 2 ** 52, hash: 'f'.repeat(64) },
    });
    const big = sized(base, DEFAULT_MAX_SNAPSHOT_BYTES);
    expect(snapshotBytes(JSON.stringify(big))).toBe(DEFAULT_MAX_SNAPSHOT_BYTES);
    await store.create(big);
    expect((await store.load(id))?.input).toBe(big.input);
    // The claim's expiry and token (a long one is kept as its SHA-256) fit beside it, and so does its next save.
    expect(await store.listDue(2e13, 10, { workflow: big.workflow.name, token: 't'.repeat(500) })).toEqual([
      id,
    ]);
    await store.save({ ...big, version: 2 ** 52 + 1 }, 2 ** 52);
    await expect(
      store.create(sized(snapshot('too-big'), DEFAULT_MAX_SNAPSHOT_BYTES + 1)),
    ).rejects.toMatchObject({
      code: 'SNAPSHOT_TOO_LARGE',
    });
  });

  it('a snapshot at the limit with the longest id and workflow name still fits in one item', async () => {
    // Ids and names are at most 200 characters (checked before anything is sent), so the other
    // attributes stay far below the 2 KiB the default limit leaves under DynamoDB's 400 KB.
    const id = `${process.pid}-${Date.now()}-`.padEnd(200, 'i');
    const base = snapshot(id, { workflow: { name: 'w'.repeat(200), version: 1, hash: 'h' } });
    await store.create(sized(base, DEFAULT_MAX_SNAPSHOT_BYTES));
    expect((await store.load(id))?.workflow.name).toHaveLength(200);
    const fat = snapshot('fat-item', { workflow: { name: 'w'.repeat(3000), version: 1, hash: 'h' } });
    await expect(store.create(fat)).rejects.toMatchObject({ code: 'INVALID_ID' });
    expect(await store.load('fat-item')).toBeNull();
  });

  it('refuses table names and limits DynamoDB would not accept', () => {
    expect(() => createDynamoStore({ client, table: 'a b' })).toThrow(TypeError);
    expect(() => createDynamoStore({ client, maxSnapshotBytes: DYNAMO_ITEM_LIMIT })).toThrow(RangeError);
    for (const dueShards of [0, 65, 1.5])
      expect(() => createDynamoStore({ client, dueShards })).toThrow(RangeError);
    // The engine's one claimMs rule: a non-negative integer (0 included).
    for (const claimMs of [-1, 1.5, Number.NaN])
      expect(() => createDynamoStore({ client, claimMs })).toThrow(RangeError);
    expect(createDynamoStore({ client, claimMs: 0 }).claimMs).toBe(0);
  });
});
