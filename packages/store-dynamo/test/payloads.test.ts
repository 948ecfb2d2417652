import { DeleteTableCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { sha256Hex } from '@stepfold/engine';
import { runPayloadStoreConformance } from '@stepfold/engine/conformance';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoPayloadStore, type DynamoPayloadStore, PAYLOAD_CHUNK_BYTES } from '../src/index.js';
import { DYNAMO_ENDPOINT, outageServer, testClient } from './server.js';

const client = testClient();
let counter = 0;
const open = () =>
  createDynamoPayloadStore({ client, table: `payloads_${process.pid}_${++counter}`, setup: { pollMs: 50 } });

// A moto server of its own for the outage test (not the instance store suite's).
const outage = await outageServer('STEPFOLD_DYNAMO_PAYLOAD_OUTAGE_PORT', client, [client]);

runPayloadStoreConformance({
  name: `dynamo (moto at ${DYNAMO_ENDPOINT})`,
  createStore: open,
  async destroyStore(store) {
    const TableName = (store as DynamoPayloadStore).table;
    await client.send(new DeleteTableCommand({ TableName })).catch(() => {});
  },
  outage: {
    createStore: () =>
      createDynamoPayloadStore({
        client: outage.client,
        table: `payload_outage_${process.pid}`,
        setup: { pollMs: 50 },
      }),
    stop: outage.stop,
    start: outage.start,
  },
});

describe('dynamo payload chunks', () => {
  const store = open();
  beforeAll(() => store.setup());
  afterAll(() => client.send(new DeleteTableCommand({ TableName: store.table })).catch(() => {}));
  const body = `"${'ü'.repeat(PAYLOAD_CHUNK_BYTES)}"`;
  const sha = sha256Hex(body);
  const put = (k: string, extra: Record<string, unknown> = {}) =>
    client.send(
      new PutItemCommand({
        TableName: store.table,
        Item: { o: { S: 'crash' }, k: { S: k }, ...extra } as never,
      }),
    );

  it('chunks written without their head (a put that crashed) read as missing, and a later put completes it', async () => {
    const bytes = new TextEncoder().encode(body);
    await put(`c#${sha}#0000`, { b: { B: bytes.subarray(0, PAYLOAD_CHUNK_BYTES) } });
    expect(await store.get('crash', sha)).toBeNull();
    expect(await store.list('crash', { limit: 10 })).toEqual({ items: [], cursor: null });
    await store.put('crash', sha, body);
    expect(await store.get('crash', sha)).toBe(body);
  });

  it('a head whose chunks are missing or do not hash to its name reads as missing, never as a wrong body', async () => {
    await store.put('crash', sha, body);
    // A chunk lost (a delete that stopped halfway): the count no longer matches.
    await client.send(
      new PutItemCommand({
        TableName: store.table,
        Item: { o: { S: 'crash' }, k: { S: `h#${'0'.repeat(64)}` }, n: { N: '3' }, z: { N: '10' } },
      }),
    );
    expect(await store.get('crash', '0'.repeat(64))).toBeNull();
    // A chunk replaced by other bytes of the same length: the hash check refuses it.
    const forged = new Uint8Array(PAYLOAD_CHUNK_BYTES).fill(0x61);
    await put(`c#${sha}#0000`, { b: { B: forged } });
    expect(await store.get('crash', sha)).toBeNull();
    expect(await store.delete('crash', [sha, '0'.repeat(64)])).toBe(2);
    expect(await store.deleteOwner('crash')).toBe(0);
  });
});
