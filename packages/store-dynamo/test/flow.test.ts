import { DeleteTableCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { makeTestSnapshot } from '@stepfold/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoStore, FLOW_HOLDER_PREFIX, FLOW_KEY_PREFIX } from '../src/index.js';
import { requireServer, testClient } from './server.js';

const client = testClient();
const table = `flow_${process.pid}`;

beforeAll(() => requireServer(client));
afterAll(async () => {
  await client.send(new DeleteTableCommand({ TableName: table })).catch(() => {});
  client.destroy();
});

/** The ids of the table's items that are not instances. */
async function storeItems(): Promise<string[]> {
  const out = await client.send(new ScanCommand({ TableName: table, ProjectionExpression: 'id' }));
  return (out.Items ?? [])
    .flatMap((i) => i['id']?.S ?? [])
    .filter((id) => id.startsWith('#flow'))
    .sort();
}

describe('dynamo adapter: flow', () => {
  it('keeps counters and holders as items of their own, out of the instance listing, gone once released', async () => {
    const store = createDynamoStore({ client, table, setup: { pollMs: 50 } });
    await store.setup();
    await store.create(makeTestSnapshot('i-1'));
    const flow = store.flow!;
    await flow.acquire('h-1', 'i-1', [{ scope: 'orders', key: 'c-1', limit: 1 }], 0, 100);
    const items = await storeItems();
    expect(items).toHaveLength(2);
    // NUL between scope, key and the 16-digit period, then a digest.
    const ordered = `${FLOW_KEY_PREFIX}orders\0c-1\0${'0'.repeat(16)}\0`;
    expect(items[0]?.startsWith(ordered)).toBe(true);
    expect(items[0]?.slice(ordered.length)).toMatch(/^[0-9a-f]{32}$/);
    expect(items[1]).toBe(`${FLOW_HOLDER_PREFIX}h-1`);
    expect((await store.list({ limit: 10 })).items.map((s) => s.id)).toEqual(['i-1']);
    await flow.release(['h-1'], 50);
    expect(await storeItems()).toEqual([]);
  });
});
