import type { Store } from '@stepfold/engine';
import { runStoreConformance } from '@stepfold/engine/conformance';
import type { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore, keysFor } from '../src/index.js';
import { dropFlow } from './flow-suite.js';
import { dropPrefix, OUTAGE_PORT, openStore, outageServer, requireServer, testClient } from './server.js';
import { subscriptionSurvivesRestart } from './wake-probe.js';

const client = testClient();
// A second Redis that only the outage test uses, so stopping it disturbs nobody.
const outageClient = testClient(`redis://127.0.0.1:${OUTAGE_PORT}`);
const opened = new Map<Store, { client: Redis | Cluster; prefix: string }>();

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
  capabilities: ['claims', 'flow', 'inbox', 'wakes'],
  createStore: () => open(client, 'conformance'),
  // The flow races: a second store object on the same prefix (and client).
  reopen: (store) => createRedisStore({ client, prefix: opened.get(store)!.prefix }),
  async destroyStore(store) {
    const t = opened.get(store);
    if (t) await dropFlow(t.client, t.prefix);
  },
  // Torn text behind the store's back: the instance hash's json, or each waiting signal's event.
  async corrupt(store, id, what) {
    const keys = keysFor(opened.get(store)!.prefix);
    if (what === 'snapshot') await client.hset(keys.instance(id), 'json', '{"id": "torn');
    else
      for (const seq of await client.hkeys(keys.sent(id)))
        await client.hset(keys.sent(id), seq, '{"type": "sig');
  },
  outage: {
    createStore: () => open(outageClient, 'outage'),
    stop: () => outageServer('stop'),
    start: () => outageServer('start'),
  },
});

// After the conformance outage test, in this file, so the two never stop the outage server at once.
describe('redis adapter: wake subscription across a restart', () => {
  it('reports lost, then restored once the server is back, then delivers hints again', async () => {
    const t = openStore(outageClient, 'wake-restart');
    try {
      const p = await subscriptionSurvivesRestart(
        t.store,
        () => outageServer('stop'),
        () => outageServer('start'),
      );
      expect(p.events.filter((e) => e !== 'wake')).toEqual(['lost', 'restored']);
      expect(p.errors).toHaveLength(1);
    } finally {
      await dropPrefix(outageClient, t.prefix).catch(() => {});
      await t.store.close();
    }
  });
});
