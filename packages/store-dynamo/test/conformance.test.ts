import { DeleteTableCommand, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { Store } from '@stepfold/engine';
import { runStoreConformance } from '@stepfold/engine/conformance';
import { createDynamoStore } from '../src/index.js';
import { outageServer, testClient, testStreamsClient } from './server.js';

const client = testClient();
// Wake notices from the table's stream: the suite's wake part runs, and every other part writes
// the stream notes too.
const streams = testStreamsClient();
const tables = new Map<Store, string>();
let counter = 0;

// A second moto server that only the outage test uses.
const outage = await outageServer('STEPFOLD_DYNAMO_OUTAGE_PORT', client, [client, streams]);

runStoreConformance({
  name: 'dynamo (moto)',
  capabilities: ['claims', 'flow', 'inbox', 'stream', 'wakes'],
  // Due work comes back earliest first whatever the fairness keys (not round-robin yet).
  fairness: false,
  createStore() {
    const table = `conformance_${process.pid}_${++counter}`;
    const store = createDynamoStore({ client, table, setup: { pollMs: 50 }, streams: { client: streams } });
    tables.set(store, table);
    return store;
  },
  // The flow races: a second store object on the same table.
  reopen: (store) => createDynamoStore({ client, table: tables.get(store)!, setup: { pollMs: 50 } }),
  async destroyStore(store) {
    await client.send(new DeleteTableCommand({ TableName: tables.get(store) })).catch(() => {});
  },
  // Torn text behind the store's back: the item's snapshot, or each waiting signal's event.
  async corrupt(store, id, what) {
    const TableName = tables.get(store);
    const Key = { id: { S: id } };
    const torn = { ':t': { S: what === 'snapshot' ? '{"id": "torn' : '{"type": "sig' } };
    if (what === 'snapshot') {
      await client.send(
        new UpdateItemCommand({
          TableName,
          Key,
          UpdateExpression: 'SET #s = :t',
          ExpressionAttributeNames: { '#s': 'snapshot' },
          ExpressionAttributeValues: torn,
        }),
      );
      return;
    }
    const item = await client.send(new GetItemCommand({ TableName, Key }));
    const n = item.Item?.['sent']?.L?.length ?? 0;
    const sets = Array.from({ length: n }, (_, i) => `#q[${i}].#e = :t`);
    await client.send(
      new UpdateItemCommand({
        TableName,
        Key,
        UpdateExpression: `SET ${sets.join(', ')}`,
        ExpressionAttributeNames: { '#q': 'sent', '#e': 'e' },
        ExpressionAttributeValues: torn,
      }),
    );
  },
  outage: {
    createStore: () =>
      createDynamoStore({ client: outage.client, table: `outage_${process.pid}`, setup: { pollMs: 50 } }),
    stop: outage.stop,
    start: outage.start,
  },
});
