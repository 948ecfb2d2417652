import type { Store } from '@stepfold/engine';
import { makeTestSnapshot } from '@stepfold/engine';
import { runStoreConformance } from '@stepfold/engine/conformance';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore, flowPrefixOf, keysFor, streamKeysOf } from '../src/index.js';
import { describeClaims } from './claims-suite.js';
import { describeFlow, dropFlow } from './flow-suite.js';
import { runRedisPayloadConformance } from './payload-suite.js';
import {
  clusterNodeOf,
  dropPrefix,
  keysUnder,
  openStore,
  ownCluster,
  requireCluster,
  testCluster,
  uniquePrefix,
} from './server.js';
import { probe, subscriptionSurvivesRestart, timerSnapshot, until } from './wake-probe.js';
import { describeWakes } from './wake-suite.js';

// Everything that uses the cluster is in this file; its restart test runs a cluster of its own.
const cluster = testCluster();
const opened = new Map<Store, string>();

afterAll(() => cluster.disconnect());
beforeAll(() => requireCluster(cluster));

runStoreConformance({
  name: 'redis-cluster',
  capabilities: ['claims', 'flow', 'inbox', 'stream', 'wakes'],
  createStore() {
    const t = openStore(cluster, 'cluster');
    opened.set(t.store, t.prefix);
    return t.store;
  },
  reopen: (store) => createRedisStore({ client: cluster, prefix: opened.get(store)! }),
  async destroyStore(store) {
    const prefix = opened.get(store);
    if (prefix) await dropFlow(cluster, prefix);
  },
  // No outage here: the restart test below is the one that stops this cluster.
});

describeWakes({ name: 'cluster', client: cluster, nodeOf: (key) => clusterNodeOf(cluster, key) });
describeClaims('cluster', cluster);
describeFlow('cluster', cluster);
runRedisPayloadConformance('redis-cluster', cluster);

describe('redis adapter on a cluster', () => {
  it('does its flow work beside the save and the create, not in them: each counter hashes to a slot of its own', () => {
    const t = openStore(cluster, 'in-save');
    expect(t.store.flow?.inSave).toBeUndefined();
    expect(t.store.flow?.inCreate).toBeUndefined();
  });

  it('keeps every key of a store in one slot, whichever node holds it', async () => {
    const t = openStore(cluster, 'slot');
    try {
      await t.store.create(makeTestSnapshot('s-1', { wakeAt: 1, status: 'waiting' }));
      await t.store.save(
        makeTestSnapshot('s-1', { version: 2, wakeAt: 2, workflow: { name: 'x', version: 1, hash: 'h' } }),
        1,
      );
      expect(await t.store.listDue(10, 10)).toEqual(['s-1']); // and a claims key
      const keys = await keysUnder(cluster, t.prefix);
      expect(keys.length).toBeGreaterThan(5);
      const slots = new Set<number>();
      for (const k of [...keys, keysFor(t.prefix).wake])
        slots.add(Number(await cluster.cluster('KEYSLOT', k)));
      expect(slots.size).toBe(1);
    } finally {
      await dropPrefix(cluster, t.prefix);
    }
  });

  it("keeps each instance's stream in the slot of its id, its two keys together", async () => {
    const t = openStore(cluster, 'stream-slots');
    const ids = ['order-1', 'order-2', 'order-3', 'order-4', 'order-5', 'order-6'];
    try {
      for (const id of ids) await t.store.stream.append(id, 'model', 1, [id]);
      const slotOf = async (k: string) => Number(await cluster.cluster('KEYSLOT', k));
      const slots = new Set<number>();
      for (const id of ids) {
        const [entries, fences] = streamKeysOf(t.prefix, id);
        expect(await cluster.exists(entries, fences)).toBe(2);
        expect(await slotOf(entries)).toBe(await slotOf(`{${id}}`));
        expect(await slotOf(fences)).toBe(await slotOf(entries));
        slots.add(await slotOf(entries));
        expect((await t.store.stream.read(id)).entries.map((e) => e.type === 'chunk' && e.data)).toEqual([
          id,
        ]);
      }
      expect(slots.size).toBeGreaterThan(1);
    } finally {
      await dropFlow(cluster, t.prefix);
      await t.store.close();
    }
  });

  it('puts each flow key in a slot of its own, its four keys together', async () => {
    const prefix = uniquePrefix('flow-slots');
    const flow = createRedisStore({ client: cluster, prefix }).flow!;
    try {
      for (let i = 0; i < 8; i++)
        await flow.acquire(`h-${i}`, 'i', [{ scope: 's', key: `k${i}`, limit: 1 }], 0, 1000);
      const keys = await keysUnder(cluster, flowPrefixOf(prefix).replace(/[[\]]/g, '\\$&'));
      expect(keys).toHaveLength(8 * 2); // F:h and F:m of each
      const slotOf = async (k: string) => Number(await cluster.cluster('KEYSLOT', k));
      const byKey = new Map<string, Set<number>>();
      for (const k of keys) {
        const base = k.slice(0, k.lastIndexOf(':'));
        byKey.set(base, (byKey.get(base) ?? new Set()).add(await slotOf(k)));
      }
      expect([...byKey.values()].every((slots) => slots.size === 1)).toBe(true);
      expect(new Set([...byKey.values()].map((s) => [...s][0])).size).toBeGreaterThan(1);
    } finally {
      await dropFlow(cluster, prefix);
    }
  });

  it('delivers hints for stores on each of the three masters', async () => {
    // Hash tags whose slots lie on three different nodes.
    const byNode = new Map<string, string>();
    for (let i = 0; byNode.size < 3 && i < 200; i++) {
      const prefix = uniquePrefix(`spread${i}`);
      const node = await clusterNodeOf(cluster, `${prefix}wake`);
      const key = `${node.options.host}:${node.options.port}`;
      node.disconnect();
      if (!byNode.has(key)) byNode.set(key, prefix);
    }
    expect(byNode.size).toBe(3);
    for (const prefix of byNode.values()) {
      const store = createRedisStore({ client: cluster, prefix });
      const p = await probe(store);
      try {
        await store.create(timerSnapshot('h-1', 123));
        await until(() => p.hints.length > 0, `a hint on ${prefix}`);
        expect(p.hints).toEqual([{ at: 123, workflow: 'waker', id: 'h-1' }]);
      } finally {
        await p.sub.close();
        await dropPrefix(cluster, prefix);
      }
    }
  });
});

// Three nodes on free ports (or STEPFOLD_REDIS_CLUSTER_RESTART_PORT and the two after it), made
// for this test: stopping the shared cluster would fail any other run using it meanwhile.
const restarted = await ownCluster('STEPFOLD_REDIS_CLUSTER_RESTART_PORT');
describe('redis adapter: wake subscription across a cluster restart', () => {
  it('reports lost, then restored once the cluster is back, then delivers hints again', async () => {
    await restarted.up();
    const own = testCluster(restarted.nodes);
    const t = openStore(own, 'cluster-restart');
    try {
      await requireCluster(own, restarted.nodes);
      const p = await subscriptionSurvivesRestart(t.store, restarted.stop, restarted.start);
      expect(p.events.filter((e) => e !== 'wake')).toEqual(['lost', 'restored']);
    } finally {
      await dropPrefix(own, t.prefix).catch(() => {});
      await t.store.close();
      own.disconnect();
    }
  });
});
