import type { Store } from '@stepfold/engine';
import { runEncryptionConformance } from '@stepfold/engine/conformance';
import { afterAll, beforeAll } from 'vitest';
import type { RedisPayloadStore } from '../src/index.js';
import { dropFlow } from './flow-suite.js';
import { dropPayloads, openPayloadStore } from './payload-suite.js';
import { dropPrefix, keysUnder, openStore, requireServer, testClient } from './server.js';

// Encryption at rest: every key under the store's prefix (instance hashes, inbox entries, due
// sets, streams) and under its payload store's, read as text straight from Redis, holds no plaintext.
const client = testClient();
const prefixes = new Map<Store, string>();
beforeAll(() => requireServer(client));
afterAll(() => client.disconnect());

/** The value of every key under `prefix`, whatever its type, as text. */
async function keysText(prefix: string): Promise<string> {
  const out: string[] = [];
  for (const key of await keysUnder(client, prefix)) {
    const type = await client.type(key);
    const value =
      type === 'string'
        ? await client.get(key)
        : type === 'hash'
          ? await client.hgetall(key)
          : type === 'list'
            ? await client.lrange(key, 0, -1)
            : type === 'set'
              ? await client.smembers(key)
              : type === 'zset'
                ? await client.zrange(key, 0, -1, 'WITHSCORES')
                : type === 'stream'
                  ? await client.xrange(key, '-', '+')
                  : `(a ${type})`;
    out.push(`${key} ${JSON.stringify(value)}`);
  }
  return out.join('\n');
}

runEncryptionConformance({
  name: 'redis',
  createStore() {
    const t = openStore(client, 'encryption');
    prefixes.set(t.store, t.prefix);
    return t.store;
  },
  async destroyStore(store) {
    const prefix = prefixes.get(store)!;
    await dropFlow(client, prefix);
    await dropPrefix(client, prefix);
  },
  rawText: (store) => keysText(prefixes.get(store)!),
  createPayloadStore: () => openPayloadStore(client, 'encryption'),
  async rawPayloadText(p) {
    const store = p as RedisPayloadStore;
    const text = await keysText(store.prefix);
    await dropPayloads(client, store);
    return text;
  },
});
