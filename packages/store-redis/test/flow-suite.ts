import { createHash } from 'node:crypto';
import type { FlowNeed } from '@stepfold/engine';
import { Cluster, type Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisStore, flowPrefixOf } from '../src/index.js';
import { dropPrefix, uniquePrefix } from './server.js';

/** Every flow key of the store under `prefix` (their own slots: SCAN on every master, DEL one by one). */
export async function dropFlow(client: Redis | Cluster, prefix: string): Promise<void> {
  const pattern = `${flowPrefixOf(prefix).replace(/[[\]]/g, '\\$&')}*`;
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      for (const key of batch) await client.del(key);
      cursor = next;
    } while (cursor !== '0');
  }
  await dropPrefix(client, prefix);
}

const slot = (scope: string, key: string, limit = 1): FlowNeed => ({ scope, key, limit });

/** The counter of (scope, key, period) under `prefix`, as the driver names it (default: the slot ('crash', 'k')). */
const counterKey = (prefix: string, scope = 'crash', key = 'k', period = 0) =>
  `${flowPrefixOf(prefix)}{${createHash('sha1')
    .update(`${scope}\0${key}\0${String(period).padStart(16, '0')}`)
    .digest('hex')}}`;

/** What the Redis flow keeps, on one server or a cluster (the conformance part covers the contract). */
export function describeFlow(name: string, client: Redis | Cluster): void {
  const prefixes: string[] = [];
  const open = () => {
    const prefix = uniquePrefix('flow');
    prefixes.push(prefix);
    return { flow: createRedisStore({ client, prefix }).flow!, prefix };
  };

  describe(`redis adapter: flow (${name})`, () => {
    afterAll(async () => {
      for (const p of prefixes) await dropFlow(client, p);
    });

    it('deletes a counter whose holders lapsed (they crashed) when it is listed', async () => {
      const { flow, prefix } = open();
      await flow.acquire('gone', 'i', [slot('crash', 'k')], 0, 100);
      expect(await flow.list({ limit: 5, now: 200 })).toEqual({ items: [], cursor: null });
      expect(await client.zcard(`${prefix}flow-counters`)).toBe(0);
      expect(await client.exists(...['h', 's', 'w', 'm'].map((p) => `${counterKey(prefix)}:${p}`))).toBe(0);
      // A renew of a lapsed holder that no key holds anymore brings nothing back.
      await flow.renew(['gone'], 10_000);
      expect(await flow.list({ limit: 5, now: 200 })).toEqual({ items: [], cursor: null });
    });

    it("keeps a rate's starts for two periods (for lagging callers) unlisted, then deletes the counter", async () => {
      const { flow, prefix } = open();
      const F = counterKey(prefix, 'rate', 'k', 1000);
      const keysOf = () => client.exists(...['h', 's', 'w', 'm'].map((p) => `${F}:${p}`));
      await flow.acquire('r1', 'i', [{ scope: 'rate', key: 'k', limit: 2, periodMs: 1000 }], 0, 10);
      await flow.release(['r1'], 20);
      // Past its window the start is not listed, but kept: a caller at 500 still counts it.
      expect(await flow.list({ limit: 5, now: 1500 })).toEqual({ items: [], cursor: null });
      expect(await client.zcard(`${prefix}flow-counters`)).toBe(1);
      expect(await keysOf()).toBe(2);
      // Past two periods a listing deletes it.
      expect(await flow.list({ limit: 5, now: 2000 })).toEqual({ items: [], cursor: null });
      expect(await client.zcard(`${prefix}flow-counters`)).toBe(0);
      expect(await keysOf()).toBe(0);
    });
  });
}
