import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
} from '@aws-sdk/client-dynamodb';
import { makeTestSnapshot } from '@stepfold/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dueKey } from '../src/encode.js';
import {
  createDynamoStore,
  DEFAULT_CLAIM_MS,
  LANE_INDEX,
  SENT_INDEX,
  tableDefinition,
} from '../src/index.js';
import { requireServer, testClient } from './server.js';

// Two clients, as two worker processes would have.
const clients = [testClient(), testClient()] as const;
const table = `stepfold_claims_${process.pid}`;
const legacy = `stepfold_legacy_${process.pid}`;
// Eight shards, not the default one: these tests show the spread and a poll's merge across shards.
const SHARDS = 8;
const [a, b] = clients.map((client) =>
  createDynamoStore({ client, table, dueShards: SHARDS, setup: { pollMs: 50 } }),
);
const wf = (name: string) => ({ name, version: 1, hash: 'h' });
const item = async (id: string, name = table) =>
  (
    await clients[0].send(
      new GetItemCommand({ TableName: name, Key: { id: { S: id } }, ConsistentRead: true }),
    )
  ).Item;

beforeAll(async () => {
  await requireServer(clients[0]);
  await a!.setup();
});
afterAll(async () => {
  for (const name of [table, legacy])
    await clients[0].send(new DeleteTableCommand({ TableName: name })).catch(() => {});
  for (const client of clients) client.destroy();
});

describe('dynamo listDue claims, shards and lanes', () => {
  it('two stores racing listDue on 50 due instances get disjoint batches covering them all', async () => {
    const ids = Array.from({ length: 50 }, (_, i) => `race-${String(i).padStart(2, '0')}`);
    for (const [i, id] of ids.entries()) await a!.create(makeTestSnapshot(id, { wakeAt: i }));
    const got: string[][] = [[], []];
    await Promise.all(
      [a!, b!].map(async (store, w) => {
        for (let round = 0; round < 4; round++) got[w]!.push(...(await store.listDue(1000, 8)));
      }),
    );
    const rest = await a!.listDue(1000, 100);
    const all = [...got[0]!, ...got[1]!, ...rest];
    expect(new Set(all).size).toBe(all.length);
    expect([...all].sort()).toEqual(ids);
    // Each store gives back only the claims it took.
    await b!.claims!.release(ids);
    expect((await a!.listDue(1000, 50)).sort()).toEqual([...got[1]!].sort());
    await a!.claims!.release(ids);
    // Released: due again, in wake-time order across the shards.
    expect(await b!.listDue(1000, 50)).toEqual(ids);
    await b!.claims!.release(ids);
  });

  it('a claim moves the sort key to its expiry and lapses claimMs after the listDue that took it', async () => {
    const short = createDynamoStore({ client: clients[0], table, claimMs: 100 });
    await short.create(makeTestSnapshot('lapse-1', { workflow: wf('lapse'), wakeAt: 5 }));
    expect(await short.listDue(1000, 10, { workflow: 'lapse' })).toEqual(['lapse-1']);
    expect(await item('lapse-1')).toMatchObject({
      claimedUntil: { N: '1100' },
      dueKey: { S: dueKey(1100, 'lapse-1') },
      wakeAt: { N: '5' },
    });
    // Measured against listDue's `now`, not the wall clock: no sleeping.
    expect(await b!.listDue(1099, 10, { workflow: 'lapse' })).toEqual([]);
    expect(await b!.listDue(1099, 10)).not.toContain('lapse-1');
    expect(await b!.listDue(1100, 10, { workflow: 'lapse' })).toEqual(['lapse-1']);
    expect((await item('lapse-1'))?.claimedUntil).toEqual({ N: String(1100 + DEFAULT_CLAIM_MS) });
    // A save rewrites the item: the claim is gone and the key is the wake time again.
    await b!.save(makeTestSnapshot('lapse-1', { version: 2, workflow: wf('lapse'), wakeAt: 6 }), 1);
    const saved = await item('lapse-1');
    expect(saved?.claimedUntil).toBeUndefined();
    expect(saved?.dueKey).toEqual({ S: dueKey(6, 'lapse-1') });
    expect(await a!.listDue(1200, 10, { workflow: 'lapse' })).toEqual(['lapse-1']);
    await expect(a!.claims!.release(['not a valid id'])).rejects.toMatchObject({ code: 'INVALID_ID' });
    await a!.claims!.release(['lapse-1', 'no-such-id']);
    expect(await item('lapse-1')).toMatchObject({ dueKey: { S: dueKey(6, 'lapse-1') } });
    expect((await item('lapse-1'))?.claimedUntil).toBeUndefined();
    expect(await b!.listDue(1200, 10, { workflow: 'lapse' })).toEqual(['lapse-1']);
  });

  it('leaseMs moves the key to now + leaseMs: shorter than claimMs lapses sooner, 0 stays due', async () => {
    await a!.create(makeTestSnapshot('leased-1', { workflow: wf('leased'), wakeAt: 5 }));
    expect(await a!.listDue(1000, 10, { workflow: 'leased', leaseMs: 40 })).toEqual(['leased-1']);
    expect(await item('leased-1')).toMatchObject({
      claimedUntil: { N: '1040' },
      dueKey: { S: dueKey(1040, 'leased-1') },
      wakeAt: { N: '5' },
    });
    expect(await b!.listDue(1039, 10, { workflow: 'leased' })).toEqual([]);
    // A lease of 0 puts the key at `now` itself, still under the due bound: due again at once.
    expect(await b!.listDue(1040, 10, { workflow: 'leased', leaseMs: 0 })).toEqual(['leased-1']);
    expect(await item('leased-1')).toMatchObject({ dueKey: { S: dueKey(1040, 'leased-1') } });
    expect(await a!.listDue(1040, 100, { leaseMs: 0 })).toContain('leased-1');
    expect(await a!.listDue(1040, 10, { workflow: 'leased' })).toEqual(['leased-1']);
    expect(await item('leased-1')).toMatchObject({
      dueKey: { S: dueKey(1040 + DEFAULT_CLAIM_MS, 'leased-1') },
    });
    await a!.claims!.release(['leased-1']);
    expect(await item('leased-1')).toMatchObject({ dueKey: { S: dueKey(5, 'leased-1') } });
  });

  it('spreads due items over the due#n shards and serves a lane from the lane index', async () => {
    const ids = Array.from({ length: 100 }, (_, i) => `spread-${i}`);
    for (const [i, id] of ids.entries()) {
      await a!.create(
        makeTestSnapshot(id, { workflow: wf(i % 4 ? 'bulk' : 'spread-lane'), wakeAt: 10_000 + i }),
      );
    }
    const shards = new Set<string>();
    for (const id of ids) shards.add((await item(id))?.dueShard?.S ?? 'none');
    expect([...shards].sort()).toEqual(Array.from({ length: SHARDS }, (_, n) => `due#${n}`).sort());
    // The lane index holds this workflow's entries under <workflow>#<n>.
    let onLane = 0;
    for (let n = 0; n < SHARDS; n++) {
      const out = await clients[0].send(
        new QueryCommand({
          TableName: table,
          IndexName: LANE_INDEX,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': 'laneShard' },
          ExpressionAttributeValues: { ':pk': { S: `spread-lane#${n}` } },
        }),
      );
      onLane += out.Items?.length ?? 0;
    }
    expect(onLane).toBe(25);
    const lane = ids.filter((_, i) => i % 4 === 0);
    expect(await a!.listDue(20_000, 5, { workflow: 'spread-lane' })).toEqual(lane.slice(0, 5));
    expect(await b!.listDue(20_000, 100, { workflow: 'spread-lane' })).toEqual(lane.slice(5));
  });

  it('a claim writes its token (a long one as its SHA-256); only that token releases it', async () => {
    await a!.create(makeTestSnapshot('tok-1', { workflow: wf('tok'), wakeAt: 5 }));
    expect(await a!.listDue(100, 10, { workflow: 'tok', token: 'worker-a' })).toEqual(['tok-1']);
    expect(await item('tok-1')).toMatchObject({
      claimToken: { S: 'worker-a' },
      dueKey: { S: dueKey(30_100, 'tok-1') },
    });
    await b!.claims!.release(['tok-1'], 'worker-b');
    await b!.claims!.release(['tok-1']);
    expect((await item('tok-1'))?.['claimToken']).toEqual({ S: 'worker-a' });
    await a!.claims!.release(['tok-1'], 'worker-a');
    const released = await item('tok-1');
    expect(released?.['dueKey']).toEqual({ S: dueKey(5, 'tok-1') });
    expect(released?.['claimToken']).toBeUndefined();
    expect(released?.['claimedUntil']).toBeUndefined();
    const long = 't'.repeat(500);
    expect(await b!.listDue(100, 10, { workflow: 'tok', token: long })).toEqual(['tok-1']);
    expect((await item('tok-1'))?.['claimToken']?.S).toMatch(/^sha256:[0-9a-f]{64}$/);
    await a!.claims!.release(['tok-1'], long);
    expect((await item('tok-1'))?.['claimToken']).toBeUndefined();
  });

  it('setup refuses a store that would poll fewer shards than the table recorded, or write more', async () => {
    const fewer = createDynamoStore({ client: clients[0], table, dueShards: 4 });
    await expect(fewer.setup()).rejects.toThrow(/dueShards 8; this store has 4\. Pass dueShards: 8/);
    // The default (one shard) on a table set up with eight: the breaking case, refused loudly.
    await expect(createDynamoStore({ client: clients[0], table }).setup()).rejects.toThrow(RangeError);
    const more = createDynamoStore({ client: clients[0], table, dueShards: 16, readDueShards: 16 });
    await expect(more.setup()).rejects.toThrow(/this store has 16/);
    // Writing fewer while polling every recorded shard: the first step of a change.
    await createDynamoStore({ client: clients[0], table, dueShards: 1, readDueShards: 8 }).setup();
  });

  it('setup upgrades a table made without the lane index and moves its legacy due entries', async () => {
    const old = tableDefinition(legacy);
    const later = ['laneShard', 'sentShard', 'sentKey'];
    await clients[0].send(
      new CreateTableCommand({
        ...old,
        AttributeDefinitions: old.AttributeDefinitions?.filter((d) => !later.includes(d.AttributeName!)),
        GlobalSecondaryIndexes: old.GlobalSecondaryIndexes?.filter(
          (i) => i.IndexName !== LANE_INDEX && i.IndexName !== SENT_INDEX,
        ),
      }),
    );
    // An item as 0.1 wrote it: one `due` partition, no lane key.
    const snap = makeTestSnapshot('old-1', { workflow: wf('old'), wakeAt: 7 });
    await clients[0].send(
      new PutItemCommand({
        TableName: legacy,
        Item: {
          id: { S: 'old-1' },
          version: { N: '1' },
          status: { S: snap.status },
          workflow: { S: 'old' },
          listShard: { S: 'all' },
          snapshot: { S: JSON.stringify(snap) },
          wakeAt: { N: '7' },
          dueShard: { S: 'due' },
          dueKey: { S: dueKey(7, 'old-1') },
        },
      }),
    );
    const store = createDynamoStore({ client: clients[0], table: legacy, setup: { pollMs: 50 } });
    await store.setup();
    const { Table } = await clients[0].send(new DescribeTableCommand({ TableName: legacy }));
    for (const index of [LANE_INDEX, SENT_INDEX])
      expect(Table?.GlobalSecondaryIndexes?.find((i) => i.IndexName === index)?.IndexStatus).toBe('ACTIVE');
    expect((await item('old-1', legacy))?.dueShard?.S).toMatch(/^due#\d$/);
    expect(await store.listDue(100, 10, { workflow: 'old' })).toEqual(['old-1']);
    await store.setup();
  });
});
