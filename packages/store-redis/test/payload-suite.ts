import type { PayloadStore } from '@stepfold/engine';
import { type PayloadOutageControl, runPayloadStoreConformance } from '@stepfold/engine/conformance';
import type { Cluster, Redis } from 'ioredis';
import { createRedisPayloadStore, type RedisPayloadStore } from '../src/index.js';
import { keysUnder } from './server.js';

let stores = 0;

/** A payload store on `client` under a prefix no other store of any test process uses (no hash tag). */
export function openPayloadStore(client: Redis | Cluster, label: string): RedisPayloadStore {
  stores += 1;
  return createRedisPayloadStore({
    client,
    prefix: `stepfold-test:${label}-${process.pid}-${Date.now().toString(36)}-${stores}:`,
  });
}

/** Deletes every key of a payload store (each owner's pair is in one slot: DEL them pairwise). */
export async function dropPayloads(client: Redis | Cluster, store: RedisPayloadStore): Promise<void> {
  for (const key of await keysUnder(client, store.prefix)) await client.del(key);
}

/** Runs the payload conformance suite on `client`, with an outage control when one is given. */
export function runRedisPayloadConformance(
  name: string,
  client: Redis | Cluster,
  outage?: { client: Redis; stop(): Promise<void>; start(): Promise<void> },
): void {
  const control: PayloadOutageControl | undefined = outage && {
    createStore: () => openPayloadStore(outage.client, 'payload-outage'),
    stop: () => outage.stop(),
    start: () => outage.start(),
  };
  const owners = new Map<PayloadStore, Redis | Cluster>();
  runPayloadStoreConformance({
    name,
    createStore() {
      const store = openPayloadStore(client, 'payloads');
      owners.set(store, client);
      return store;
    },
    async destroyStore(store) {
      await dropPayloads(owners.get(store) ?? (outage?.client as Redis), store as RedisPayloadStore);
    },
    ...(control ? { outage: control } : {}),
  });
}
