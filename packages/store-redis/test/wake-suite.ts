import type { TaskState } from '@stepfold/engine';
import { makeTestSnapshot } from '@stepfold/engine';
import { type Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisStore } from '../src/index.js';
import { wakeConnectionName } from '../src/wakes.js';
import { dropPrefix, FAIL_FAST, uniquePrefix } from './server.js';
import { probe, timerSnapshot, until } from './wake-probe.js';

/** The server a wake suite runs on: one Redis or a cluster. */
export interface WakeTarget {
  name: string;
  client: Redis | Cluster;
  /** A plain connection to the node that holds `key`'s slot (the server itself when not a cluster). */
  nodeOf(key: string): Promise<Redis>;
}

/** A running task whose deadline is the wake time (handed off when `queued`). */
const task = (deadline: number, queued = false): Record<string, TaskState> => ({
  'a:run': {
    step: 'a',
    phase: 'run',
    attempt: 1,
    idempotencyKey: 'k',
    handler: 'h',
    dispatchedAt: 0,
    deadline,
    dispatchVersion: 1,
    ...(queued ? { queued } : {}),
  },
});

/** Wake hints on the wire, closing subscriptions, and a broken subscriber connection coming back. */
export function describeWakes(target: WakeTarget): void {
  const { client } = target;
  const prefixes: string[] = [];
  const plain: Redis[] = [];
  const open = (label: string) => {
    const prefix = uniquePrefix(label);
    prefixes.push(prefix);
    return { prefix, store: createRedisStore({ client, prefix }) };
  };
  const node = async (key: string) => {
    const n = await target.nodeOf(key);
    plain.push(n);
    return n;
  };
  // Who is subscribed to a channel, asked on the node that holds it.
  const subscribers = async (channel: string) => {
    const n = await node(channel);
    const [, count] = (await (client.isCluster
      ? n.call('PUBSUB', 'SHARDNUMSUB', channel)
      : n.call('PUBSUB', 'NUMSUB', channel))) as [string, number];
    return Number(count);
  };

  afterAll(async () => {
    for (const p of prefixes) await dropPrefix(client, p);
    for (const n of plain) n.disconnect();
  });

  describe(`redis adapter wakes: ${target.name}`, () => {
    it('a write with no notice publishes nothing; a timer’s hint is small JSON, a hand-off’s carries its snapshot while it is small', async () => {
      const { prefix, store } = open('quiet');
      const raw = (await node(`${prefix}wake`)).duplicate();
      plain.push(raw);
      const wire: string[] = [];
      raw.on(client.isCluster ? 'smessage' : 'message', (_c: string, m: string) => wire.push(m));
      await (client.isCluster ? raw.ssubscribe(`${prefix}wake`) : raw.subscribe(`${prefix}wake`));
      const p = await probe(store);
      try {
        const wf = { name: 'waker', version: 1, hash: 'h' };
        await store.create(makeTestSnapshot('q-1', { workflow: wf, wakeAt: 50 }));
        await store.save(
          makeTestSnapshot('q-1', { version: 2, workflow: wf, wakeAt: 60, tasks: task(60) }),
          1,
        );
        await store.save(makeTestSnapshot('q-1', { version: 3, workflow: wf, wakeAt: null }), 2);
        // A save that does not write announces nothing, though its snapshot has a timer.
        await expect(store.save(timerSnapshot('q-1', 999, { version: 9 }), 1)).rejects.toMatchObject({
          code: 'VERSION_CONFLICT',
        });
        await expect(store.create(timerSnapshot('q-1', 998))).rejects.toMatchObject({
          code: 'ALREADY_EXISTS',
        });
        await store.save(timerSnapshot('q-1', 4242, { version: 4 }), 3);
        // A hand-off carries its snapshot, so a worker takes the task with no claim or load; one
        // too large for every subscriber to receive goes without.
        const handed = timerSnapshot('q-2', 777, { timers: [], tasks: task(777, true) });
        await store.create(handed);
        const big = timerSnapshot('q-3', 778, {
          timers: [],
          tasks: task(778, true),
          input: 'x'.repeat(9000),
        });
        await store.create(big);
        await until(() => p.hints.length >= 3 && wire.length >= 3, 'three hints');
        expect(wire).toEqual([
          '{"at":4242,"w":"waker","i":"q-1"}',
          `{"at":777,"w":"waker","i":"q-2","s":${JSON.stringify(handed)}}`,
          '{"at":778,"w":"waker","i":"q-3"}',
        ]);
        expect(p.hints).toEqual([
          { at: 4242, workflow: 'waker', id: 'q-1' },
          { at: 777, workflow: 'waker', id: 'q-2', snapshot: handed },
          { at: 778, workflow: 'waker', id: 'q-3' },
        ]);
        expect(p.events).toEqual(['wake', 'wake', 'wake']);
      } finally {
        await p.sub.close();
        // Now, not in afterAll: a later test restarts the cluster, and this client would reconnect
        // and re-send SSUBSCRIBE to a node not yet serving the slot (an unhandled CLUSTERDOWN).
        raw.disconnect();
      }
    });

    it('ignores payloads that are not hints, and a listener that throws keeps its subscription', async () => {
      const { prefix, store } = open('junk');
      const seen: number[] = [];
      const sub = await store.wakes!.subscribe({
        wake(h) {
          seen.push(h.at);
          throw new Error('listener bug');
        },
      });
      try {
        const pub = await node(`${prefix}wake`);
        const cmd = client.isCluster ? 'SPUBLISH' : 'PUBLISH';
        for (const junk of ['not json', '{"at":"1"}', '{"at":null}', '[]', '{"w":"x"}']) {
          await pub.call(cmd, `${prefix}wake`, junk);
        }
        await store.create(timerSnapshot('j-1', 11));
        await store.create(timerSnapshot('j-2', 12));
        await until(() => seen.length >= 2, 'two hints');
        expect(seen).toEqual([11, 12]);
      } finally {
        await sub.close();
      }
    });

    it('close() unsubscribes and quits the dedicated connection; store.close() ends what is left', async () => {
      const { prefix, store } = open('close');
      const channel = `${prefix}wake`;
      const a = await probe(store);
      const b = await probe(store);
      expect(await subscribers(channel)).toBe(2);
      await a.sub.close();
      expect(await subscribers(channel)).toBe(1);
      await store.close();
      expect(await subscribers(channel)).toBe(0);
      await store.create(timerSnapshot('c-1', 5));
      await new Promise((r) => setTimeout(r, 200));
      expect([...a.hints, ...b.hints]).toEqual([]);
      await b.sub.close(); // closing twice is harmless
    });

    it('a killed subscriber connection reports lost, reconnects by itself, then restored', async () => {
      const { prefix, store } = open('kill');
      const p = await probe(store);
      try {
        const holder = await node(`${prefix}wake`);
        const name = wakeConnectionName(`${prefix}wake`);
        const list = String(await holder.client('LIST'));
        const id = /(?:^|\n)id=(\d+) .*? name=(\S*)/g;
        const ids = [...list.matchAll(id)].filter((m) => m[2] === name).map((m) => m[1]!);
        expect(ids).toHaveLength(1);
        await holder.client('KILL', 'ID', ids[0]!);
        await until(() => p.events.includes('restored'), 'restored()');
        expect(p.events).toEqual(['lost', 'restored']);
        expect(await subscribers(`${prefix}wake`)).toBe(1);
        await store.create(timerSnapshot('k-1', 31));
        await until(() => p.hints.length > 0, 'a hint after the reconnect');
        expect(p.hints).toEqual([{ at: 31, workflow: 'waker', id: 'k-1' }]);
      } finally {
        await p.sub.close();
      }
    });
  });
}

/** A subscription to a server that is not there fails as STORE_UNAVAILABLE, quickly. */
export function describeDeadSubscribe(): void {
  it('subscribing while the server is away is STORE_UNAVAILABLE and leaves no connection behind', async () => {
    const dead = new Redis('redis://127.0.0.1:1', FAIL_FAST);
    dead.on('error', () => {});
    try {
      const store = createRedisStore({ client: dead, prefix: uniquePrefix('dead-wakes') });
      await expect(store.wakes!.subscribe({ wake() {} })).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
        retryable: true,
      });
    } finally {
      dead.disconnect();
    }
  });
}
