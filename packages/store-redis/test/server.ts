import { Cluster, type ClusterNode, Redis, type RedisOptions } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { type TestServer, testServer } from '../../../scripts/services/test-servers.mjs';
import { createRedisStore, type RedisStore, type RedisStoreOptions } from '../src/index.js';

/** URL of the Redis test server (`bash scripts/services.sh up redis`). */
export const REDIS_URL = process.env.STEPFOLD_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The Redis Cluster's nodes (`bash scripts/services.sh up redis-cluster`), `host:port,...`. */
export const CLUSTER_NODES: ClusterNode[] = (
  process.env.STEPFOLD_REDIS_CLUSTER_NODES ?? '127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003'
)
  .split(',')
  .map((hostPort) => {
    const at = hostPort.lastIndexOf(':');
    return { host: hostPort.slice(0, at), port: Number(hostPort.slice(at + 1)) };
  });

/**
 * Client options that fail fast while the server is down and reconnect on their own when it is back:
 * a command waits for at most two reconnect attempts, reconnects are at most 500 ms apart.
 */
export const FAIL_FAST: RedisOptions = {
  maxRetriesPerRequest: 1,
  retryStrategy: (attempt) => Math.min(attempt * 100, 500),
  connectTimeout: 2000,
  commandTimeout: 10_000,
};

/** A client with {@link FAIL_FAST} options; errors while the server is away are expected, not logged. */
export function testClient(url = REDIS_URL): Redis {
  const client = new Redis(url, FAIL_FAST);
  client.on('error', () => {});
  return client;
}

/** A Cluster client of `nodes` with {@link FAIL_FAST} node options that keeps reconnecting while the cluster is down. */
export function testCluster(nodes: ClusterNode[] = CLUSTER_NODES): Cluster {
  const cluster = new Cluster(nodes, {
    redisOptions: FAIL_FAST,
    clusterRetryStrategy: (attempt) => Math.min(attempt * 100, 500),
  });
  cluster.on('error', () => {});
  return cluster;
}

/** A plain connection to the cluster master that holds `key`'s slot. */
export async function clusterNodeOf(cluster: Cluster, key: string): Promise<Redis> {
  const slot = Number(await cluster.cluster('KEYSLOT', key));
  const ranges = await cluster.cluster('SLOTS');
  const master = ranges.find(([from, to]) => slot >= from && slot <= to)?.[2];
  if (!master) throw new Error(`no node holds slot ${slot}`);
  const node = new Redis({ ...FAIL_FAST, host: master[0], port: master[1] });
  node.on('error', () => {});
  return node;
}

/** Throws a clear error (never skips) unless the cluster at `nodes` answers with cluster_state:ok. */
export async function requireCluster(cluster: Cluster, nodes: ClusterNode[] = CLUSTER_NODES): Promise<void> {
  try {
    const info = String(await cluster.cluster('INFO'));
    if (!info.includes('cluster_state:ok')) throw new Error(`cluster is not ok:\n${info}`);
  } catch (e) {
    const at = nodes.map((n) => `${(n as { host: string }).host}:${(n as { port: number }).port}`);
    throw new Error(
      `no Redis Cluster at ${at.join(',')} (set STEPFOLD_REDIS_CLUSTER_NODES or run \`bash scripts/services.sh up redis-cluster\`)`,
      { cause: e },
    );
  }
}

/** Throws a clear error (never skips) when no Redis answers at {@link REDIS_URL}. */
export async function requireServer(client: Redis): Promise<void> {
  try {
    if ((await client.ping()) !== 'PONG') throw new Error('PING did not answer PONG');
  } catch (e) {
    throw new Error(
      `no Redis at ${REDIS_URL} (set STEPFOLD_REDIS_URL or run \`bash scripts/services.sh up redis\`)`,
      { cause: e },
    );
  }
}

let stores = 0;

/** A prefix no other store of this process or any other test process uses, with its own hash tag. */
export function uniquePrefix(label = 't'): string {
  stores += 1;
  return `stepfold-test:{${label}-${process.pid}-${Date.now().toString(36)}-${stores}}:`;
}

/** Every key under `prefix` (SCAN, never KEYS; on a cluster, SCAN on every master). */
export async function keysUnder(client: Redis | Cluster, prefix: string): Promise<string[]> {
  const out: string[] = [];
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      out.push(...batch);
      cursor = next;
    } while (cursor !== '0');
  }
  return out.sort();
}

/** Deletes every key under `prefix` (one slot: a multi-key DEL works on a cluster too). */
export async function dropPrefix(client: Redis | Cluster, prefix: string): Promise<void> {
  const keys = await keysUnder(client, prefix);
  for (let i = 0; i < keys.length; i += 500) await client.del(...keys.slice(i, i + 500));
}

/** A Redis of one suite's own for its outage tests, with a {@link testClient} of it. */
export type OutageServer = TestServer & { client: Redis };

/**
 * A Redis on a port of its own (`process.env[variable]`, or a free one, so parallel runs never
 * share it) that only one suite's outage tests use, so stopping it disturbs nobody: it is started
 * (with the main server required) before the suite; after it, both clients are disconnected
 * (`main`, the suite's client of the main server) and the server is dropped with its data.
 */
export async function outageServer(variable: string, main: Redis): Promise<OutageServer> {
  const server = await testServer('redis', variable);
  const client = testClient(`redis://127.0.0.1:${server.port}`);
  beforeAll(async () => {
    await requireServer(main);
    await server.up();
  });
  afterAll(async () => {
    main.disconnect();
    client.disconnect();
    await server.drop();
  });
  return { ...server, client };
}

/** A Redis Cluster of one test's own (three nodes on ports in a row) that it stops and starts. */
export type OwnCluster = TestServer & { nodes: ClusterNode[] };

/**
 * A Redis Cluster on ports of its own (`process.env[variable]` and the two after it, or three free
 * ones in a row), so stopping it disturbs no other test or checkout: made on the first `up` (a
 * few seconds, paid only by a run that needs it), dropped after the file.
 */
export async function ownCluster(variable: string): Promise<OwnCluster> {
  const server = await testServer('redis-cluster', variable);
  let made = false;
  afterAll(async () => {
    if (made) await server.drop();
  });
  return {
    ...server,
    nodes: [0, 1, 2].map((i) => ({ host: '127.0.0.1', port: server.port + i })),
    up: () => {
      made = true;
      return server.up();
    },
  };
}

/** A store on `client` under a fresh prefix, remembered so it can be dropped afterwards. */
export interface TestStore {
  store: RedisStore;
  client: Redis | Cluster;
  prefix: string;
}

/** Opens a store under a fresh prefix on `client`, with `options` for createRedisStore. */
export function openStore(
  client: Redis | Cluster,
  label?: string,
  options: Omit<RedisStoreOptions, 'client' | 'prefix'> = {},
): TestStore {
  const prefix = uniquePrefix(label);
  return { store: createRedisStore({ ...options, client, prefix }), client, prefix };
}
