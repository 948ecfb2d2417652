import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  GetItemCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { makeTestSnapshot, parseEvent, type Snapshot } from '@stepfold/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dueKey } from '../src/encode.js';
import { createDynamoStore, SEARCH_INDEX, SENT_INDEX, shardOf, tableDefinition } from '../src/index.js';
import { requireServer, testClient } from './server.js';

const client = testClient();
const table = `stepfold_upgrade_${process.pid}`;
const wf = { name: 'old', version: 1, hash: 'h' };
const item = async (id: string) =>
  (await client.send(new GetItemCommand({ TableName: table, Key: { id: { S: id } }, ConsistentRead: true })))
    .Item;

/** An item as the previous version wrote it: no `definition`, and a claim without a token. */
async function putOld(s: Snapshot, claimedUntil?: number) {
  const shard = shardOf(s.id, 8);
  const wakeAt = s.wakeAt!;
  await client.send(
    new PutItemCommand({
      TableName: table,
      Item: {
        id: { S: s.id },
        version: { N: String(s.version) },
        status: { S: s.status },
        workflow: { S: s.workflow.name },
        listShard: { S: 'all' },
        snapshot: { S: JSON.stringify(s) },
        wakeAt: { N: String(wakeAt) },
        dueShard: { S: `due#${shard}` },
        laneShard: { S: `${s.workflow.name}#${shard}` },
        dueKey: { S: dueKey(claimedUntil ?? wakeAt, s.id) },
        ...(claimedUntil === undefined ? {} : { claimedUntil: { N: String(claimedUntil) } }),
      },
    }),
  );
}

beforeAll(() => requireServer(client));
afterAll(async () => {
  await client.send(new DeleteTableCommand({ TableName: table })).catch(() => {});
  client.destroy();
});

describe('dynamo store on a table the previous version set up', () => {
  it('setup adds sent-index and search-index; old items refuse sends until saved, and their token-less claims lapse', async () => {
    const previous = tableDefinition(table);
    await client.send(
      new CreateTableCommand({
        ...previous,
        AttributeDefinitions: previous.AttributeDefinitions?.filter(
          (d) => !['sentShard', 'sentKey', 'searchName', 'searchKey'].includes(d.AttributeName!),
        ),
        GlobalSecondaryIndexes: previous.GlobalSecondaryIndexes?.filter(
          (i) => i.IndexName !== SENT_INDEX && i.IndexName !== SEARCH_INDEX,
        ),
      }),
    );
    await client.send(
      new PutItemCommand({ TableName: table, Item: { id: { S: '#stepfold' }, dueShards: { N: '8' } } }),
    );
    await putOld(makeTestSnapshot('old-wait', { workflow: wf, status: 'waiting', wakeAt: 10 }));
    await putOld(makeTestSnapshot('old-claimed', { workflow: wf, wakeAt: 10 }), 5000);

    // The table recorded eight shards (the earlier default): the store keeps its layout.
    const store = createDynamoStore({ client, table, dueShards: 8, setup: { pollMs: 50 } });
    await store.setup();
    const { Table } = await client.send(new DescribeTableCommand({ TableName: table }));
    for (const index of [SENT_INDEX, SEARCH_INDEX])
      expect(Table?.GlobalSecondaryIndexes?.find((i) => i.IndexName === index)?.IndexStatus).toBe('ACTIVE');
    await store.setup(); // idempotent

    // No `definition` yet: the send is refused (runner.send then applies the signal itself, which saves it).
    const go = parseEvent({ type: 'signal', at: 1, name: 'go', payload: null });
    expect(await store.inbox!.send('old-wait', go, ['old@1@h'])).toBe(false);
    expect((await item('old-wait'))?.['sent']).toBeUndefined();
    const search = { customerId: '42' };
    await store.save(
      makeTestSnapshot('old-wait', { workflow: wf, status: 'waiting', version: 2, search }),
      1,
    );
    expect((await item('old-wait'))?.['definition']).toEqual({ S: 'old@1@h' });
    expect((await store.list({ limit: 5, where: search })).items.map((s) => s.id)).toEqual(['old-wait']);
    expect(await store.inbox!.send('old-wait', go, ['old@1@h'])).toBe(true);

    // A claim taken by the previous version has no token: no release ends it, it lapses.
    await store.claims!.release(['old-claimed']);
    await store.claims!.release(['old-claimed'], 'anyone');
    expect((await item('old-claimed'))?.['claimedUntil']).toEqual({ N: '5000' });
    expect(await store.listDue(4999, 10, { workflow: 'old' })).toEqual([]);
    expect(await store.listDue(5000, 10, { workflow: 'old', token: 'new-worker' })).toEqual(['old-claimed']);
    expect((await item('old-claimed'))?.['claimToken']).toEqual({ S: 'new-worker' });
    await store.claims!.release(['old-claimed'], 'new-worker');
    expect(await item('old-claimed')).toMatchObject({ dueKey: { S: dueKey(10, 'old-claimed') } });
  });
});
