import { DeleteTableCommand, ListTablesCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { Store } from '@stepfold/engine';
import { runEncryptionConformance } from '@stepfold/engine/conformance';
import { afterAll, beforeAll } from 'vitest';
import { createDynamoPayloadStore, createDynamoStore, type DynamoPayloadStore } from '../src/index.js';
import { requireServer, testClient, testStreamsClient } from './server.js';

// Encryption at rest: every item of the store's tables (instances with their inboxes, flow,
// streams) and of its payload table, scanned straight from the server, holds no plaintext.
const client = testClient();
const streams = testStreamsClient();
const tables = new Map<Store, string>();
let counter = 0;
beforeAll(() => requireServer(client));
afterAll(() => {
  client.destroy();
  streams.destroy();
});

/** The names of the tables `table` and `table…` (a store's companions share its name). */
async function tablesOf(table: string): Promise<string[]> {
  const out: string[] = [];
  let start: string | undefined;
  do {
    const page = await client.send(new ListTablesCommand({ ExclusiveStartTableName: start }));
    out.push(...(page.TableNames ?? []).filter((n) => n === table || n.startsWith(`${table}_`)));
    start = page.LastEvaluatedTableName;
  } while (start);
  return out;
}

/** Binary attributes (payload bodies are UTF-8 bytes) read as the text they hold. */
const asText = (_: string, v: unknown) => (v instanceof Uint8Array ? new TextDecoder().decode(v) : v);

/** Every item of those tables, as JSON text. */
async function tablesText(table: string): Promise<string> {
  const texts: string[] = [];
  for (const TableName of await tablesOf(table)) {
    let from: Record<string, import('@aws-sdk/client-dynamodb').AttributeValue> | undefined;
    do {
      const page = await client.send(new ScanCommand({ TableName, ExclusiveStartKey: from }));
      texts.push(JSON.stringify(page.Items ?? [], asText));
      from = page.LastEvaluatedKey;
    } while (from);
  }
  return texts.join('\n');
}

const drop = async (table: string) => {
  for (const TableName of await tablesOf(table))
    await client.send(new DeleteTableCommand({ TableName })).catch(() => {});
};

runEncryptionConformance({
  name: 'dynamo (moto)',
  createStore() {
    const table = `encryption_${process.pid}_${++counter}`;
    const store = createDynamoStore({ client, table, setup: { pollMs: 50 }, streams: { client: streams } });
    tables.set(store, table);
    return store;
  },
  destroyStore: (store) => drop(tables.get(store)!),
  rawText: (store) => tablesText(tables.get(store)!),
  createPayloadStore: () =>
    createDynamoPayloadStore({ client, table: `encp_${process.pid}_${++counter}`, setup: { pollMs: 50 } }),
  async rawPayloadText(p) {
    const { table } = p as DynamoPayloadStore;
    const text = await tablesText(table);
    await drop(table);
    return text;
  },
});
