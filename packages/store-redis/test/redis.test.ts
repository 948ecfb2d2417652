import type { Store } from '@stepfold/engine';
import { runStoreConformance } from '@stepfold/engine/conformance';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { dropPrefix, OUTAGE_PORT, openStore, outageServer, requireServer, testClient } from './server.js';

const client = testClient();
// A second Redis that only the outage test uses, so stopping it disturbs nobody.
const outageClient = testClient(`redis://127.0.0.1:${OUTAGE_PORT}`);
const opened = new Map<Store, { client: Redis; prefix: string }>();

function open(on: Redis, label: string): Store {
  const t = openStore(on, label);
  opened.set(t.store, t);
  return t.store;
}

beforeAll(async () => {
  await requireServer(client);
  await outageServer('up');
});
afterAll(() => {
  client.disconnect();
  outageClient.disconnect();
});

runStoreConformance({
  name: 'redis',
  createStore: () => open(client, 'conformance'),
  async destroyStore(store) {
    const t = opened.get(store);
    if (t) await dropPrefix(t.client, t.prefix);
  },
  outage: {
    createStore: () => open(outageClient, 'outage'),
    stop: () => outageServer('stop'),
    start: () => outageServer('start'),
  },
});
