import type { Store } from '@stepfold/engine';
import { runStoreConformance } from '@stepfold/engine/conformance';
import type { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createRedisStore, keysFor } from '../src/index.js';
import { dropFlow } from './flow-suite.js';
import { dropPrefix, openStore, outageServer, testClient } from './server.js';
import { subscriptionSurvivesRestart } from './wake-probe.js';

const client = testClient();
// A second Redis that only the outage test and the wake restart test use.
const outage = await outageServer('STEPFOLD_REDIS_OUTAGE_PORT', client);
const opened = new Map<Store, { client: Redis | Cluster; prefix: string }>();

function open(on: Redis, label: string): Store {
  const t = openStore(on, label);
  opened.set(t.store, t);
  return t.store;
}

runStoreConformance({
  name: 'redis',
  capabilities: ['claims', 'flow', 'inbox', 'stream', 'wakes'],
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
    createStore: () => open(outage.client, 'outage'),
    stop: outage.stop,
    start: outage.start,
  },
});

// After the conformance outage test, in this file, so the two never stop the outage server at once.
describe('redis adapter: wake subscription across a restart', () => {
  it('reports lost, then restored once the server is back, then delivers hints again', async () => {
    const t = openStore(outage.client, 'wake-restart');
    try {
      const p = await subscriptionSurvivesRestart(t.store, outage.stop, outage.start);
      expect(p.events.filter((e) => e !== 'wake')).toEqual(['lost', 'restored']);
      expect(p.errors).toHaveLength(1);
    } finally {
      await dropPrefix(outage.client, t.prefix).catch(() => {});
      await t.store.close();
    }
  });
});
