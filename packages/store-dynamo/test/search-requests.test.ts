// What a search costs on DynamoDB: the requests `list({ where })` sends and the items they read,
// counted on the client, against a table of many instances. It must read the index entries and
// instances that match, not the table. The instances are loaded with BatchWriteItem as the items
// `create` writes (checked first): the test server copies the whole table for each transaction,
// so creating them one by one would take hours there, not what it takes on DynamoDB.
import {
  type AttributeValue,
  type BatchGetItemCommandInput,
  BatchWriteItemCommand,
  type BatchWriteItemCommandOutput,
  DeleteTableCommand,
  GetItemCommand,
  type QueryCommandOutput,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { createStoreKit, makeTestSnapshot, type Snapshot } from '@stepfold/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DUE_SHARDS, DEFAULT_MAX_SNAPSHOT_BYTES, toItem } from '../src/encode.js';
import { createDynamoStore } from '../src/index.js';
import { searchItemId } from '../src/search-key.js';
import { indexWrites } from '../src/search-writes.js';
import { requireServer, testClient } from './server.js';

/**
 * Instances in the table, 100,000 as scenario 33 names (STEPFOLD_SEARCH_INSTANCES to change it for
 * a quick local run). The test server applies one request at a time, so loading is bound by its
 * write rate: about 90 s on a quiet two-core machine, the first Query ~20 s while it builds its index.
 */
const INSTANCES = Number(process.env.STEPFOLD_SEARCH_INSTANCES ?? 100_000);
/** Instances of each customer, whatever the table's size. */
const PER_CUSTOMER = 25;
const CUSTOMERS = Math.ceil(INSTANCES / PER_CUSTOMER);

const client = testClient();
const table = `stepfold_search_requests_${process.pid}`;
const ref = { client, name: table, shards: DEFAULT_DUE_SHARDS, readShards: DEFAULT_DUE_SHARDS };
const kit = createStoreKit('dynamodb', () => false, {
  asked: undefined,
  fallback: DEFAULT_MAX_SNAPSHOT_BYTES,
});

/** What the counted part of a test sent: requests by command, index entries and instances read. */
const count = { on: false, byCommand: {} as Record<string, number>, entries: 0, instances: 0 };
client.middlewareStack.add(
  (next, context) => async (args) => {
    const out = await next(args);
    const name = context.commandName ?? '?';
    if (count.on) {
      count.byCommand[name] = (count.byCommand[name] ?? 0) + 1;
      if (name === 'QueryCommand') count.entries += (out.output as QueryCommandOutput).ScannedCount ?? 0;
      if (name === 'BatchGetItemCommand')
        for (const ask of Object.values((args.input as BatchGetItemCommandInput).RequestItems ?? {}))
          count.instances += ask.Keys?.length ?? 0;
    }
    return out;
  },
  { step: 'initialize', name: 'countSearchRequests' },
);

/** Counts the requests `run` sends. */
async function counted<T>(run: () => Promise<T>): Promise<T> {
  Object.assign(count, { on: true, byCommand: {}, entries: 0, instances: 0 });
  try {
    return await run();
  } finally {
    count.on = false;
  }
}

const customerOf = (i: number) => `c-${i % CUSTOMERS}`;
const idOf = (i: number) => `order-${String(i).padStart(7, '0')}`;

function order(i: number): Snapshot {
  return makeTestSnapshot(idOf(i), {
    // Half of each customer's instances wait.
    status: Math.floor(i / CUSTOMERS) % 2 ? 'waiting' : 'running',
    search: { customerId: customerOf(i), total: i },
  });
}

/** The items `create` writes for `s`: the instance, and an index item per search value. */
function itemsOf(s: Snapshot): Array<Record<string, AttributeValue>> {
  const indexed = indexWrites(ref, s.id, {}, s.search ?? {}).map((w) => w.Put!.Item!);
  return [toItem(kit.encode(s), DEFAULT_DUE_SHARDS), ...indexed];
}

/** Writes `items` 25 to a request, a few requests in flight, sending again what DynamoDB left unprocessed. */
async function load(items: Array<Record<string, AttributeValue>>): Promise<void> {
  const batches: WriteRequest[][] = [];
  for (let i = 0; i < items.length; i += 25)
    batches.push(items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })));
  const next = async (): Promise<void> => {
    for (let batch = batches.pop(); batch; batch = batches.pop()) {
      let left: WriteRequest[] | undefined = batch;
      while (left?.length) {
        const out: BatchWriteItemCommandOutput = await client.send(
          new BatchWriteItemCommand({ RequestItems: { [table]: left } }),
        );
        left = out.UnprocessedItems?.[table];
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, next));
}

const store = createDynamoStore({ client, table, setup: { pollMs: 50 } });
// A table of its own for the check of what create writes: a transaction on the big table is slow
// on the test server (it copies the table), and is not what is measured.
const probeTable = `${table}_probe`;
const probeStore = createDynamoStore({ client, table: probeTable, setup: { pollMs: 50 } });

beforeAll(async () => {
  await requireServer(client);
  await store.setup();
  await probeStore.setup();
  const started = Date.now();
  const all: Array<Record<string, AttributeValue>> = [];
  for (let i = 0; i < INSTANCES; i++) all.push(...itemsOf(order(i)));
  await load(all);
  console.log(
    `search-requests: loaded ${INSTANCES} instances (${all.length} items) in ${Date.now() - started} ms`,
  );
}, 3_600_000);
afterAll(async () => {
  for (const TableName of [table, probeTable])
    await client.send(new DeleteTableCommand({ TableName })).catch(() => {});
  client.destroy();
});

/** Every page of `query`, `limit` at a time: the ids and the pages it took. */
async function pages(query: Parameters<typeof store.list>[0]): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let n = 0;
  do {
    const page: Awaited<ReturnType<typeof store.list>> = await store.list({ ...query, cursor });
    ids.push(...page.items.map((s) => s.id));
    cursor = page.cursor;
    n++;
  } while (cursor !== null);
  return { ids, pages: n };
}

describe(`search requests on ${INSTANCES} instances`, () => {
  it('the loaded items are the items create writes', async () => {
    const probe = order(INSTANCES);
    await probeStore.create(probe);
    const [instance, ...entries] = itemsOf(probe);
    const got = async (id: string) =>
      (
        await client.send(
          new GetItemCommand({ TableName: probeTable, Key: { id: { S: id } }, ConsistentRead: true }),
        )
      ).Item;
    expect(await got(probe.id)).toMatchObject(instance!);
    expect(await got(searchItemId(probe.id, 'customerId'))).toEqual(entries[0]);
    expect(await got(searchItemId(probe.id, 'total'))).toEqual(entries[1]);
    expect(await probeStore.delete(probe.id)).toBe(true);
    expect(await got(searchItemId(probe.id, 'customerId'))).toBeUndefined();
  });

  it('where customerId reads its entries and instances, a request of each a page', async () => {
    const customer = customerOf(7);
    const expected = Array.from({ length: INSTANCES }, (_, i) => i)
      .filter((i) => customerOf(i) === customer)
      .map(idOf);
    const got = await counted(() => pages({ where: { customerId: customer }, limit: 10 }));
    console.log(`search-requests: where customerId (${expected.length} matches):`, JSON.stringify(count));
    expect(got.ids).toEqual(expected);
    expect(count.byCommand).toEqual({ QueryCommand: got.pages, BatchGetItemCommand: got.pages });
    // Each page reads one more than it keeps (is there another page?) and its cursor's entry again.
    expect(count.entries).toBeLessThanOrEqual(expected.length + 2 * got.pages);
    expect(count.instances).toBeLessThanOrEqual(expected.length + got.pages);
  });

  it('with a status too, the customer entries are read and the status checked on the instances', async () => {
    const customer = customerOf(8);
    const matches = Array.from({ length: INSTANCES }, (_, i) => i).filter((i) => customerOf(i) === customer);
    const got = await counted(() =>
      pages({ where: { customerId: customer, status: 'waiting' }, limit: 100 }),
    );
    console.log(
      `search-requests: where customerId and status (${matches.length} entries):`,
      JSON.stringify(count),
    );
    expect(got.ids).toEqual(matches.filter((i) => Math.floor(i / CUSTOMERS) % 2).map(idOf));
    expect(count.entries).toBeLessThanOrEqual(matches.length + 2);
    expect(count.instances).toBeLessThanOrEqual(matches.length + 1);
  });

  it('a range ordered by the attribute reads the entries of the range, in both orders', async () => {
    const from = Math.floor(INSTANCES / 2);
    const expected = Array.from({ length: PER_CUSTOMER }, (_, k) => idOf(from + k));
    for (const desc of [false, true]) {
      const got = await counted(() =>
        pages({
          where: { total: { gte: from, lt: from + PER_CUSTOMER } },
          orderBy: { field: 'total', desc },
          limit: 10,
        }),
      );
      console.log(`search-requests: total range, desc ${desc}:`, JSON.stringify(count));
      expect(got.ids).toEqual(desc ? [...expected].reverse() : expected);
      expect(count.byCommand).toEqual({ QueryCommand: got.pages, BatchGetItemCommand: got.pages });
      expect(count.entries).toBeLessThanOrEqual(PER_CUSTOMER + 2 * got.pages);
    }
  });
});
