import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Store } from '@stepfold/engine';
import { Redis, type RedisOptions } from 'ioredis';
import { createRedisStore } from '../src/index.js';

/** URL of the Redis test server (`bash scripts/services.sh up redis`). */
export const REDIS_URL = process.env.STEPFOLD_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Port of the second Redis server the outage test stops and starts; no other test uses it. */
export const OUTAGE_PORT = Number(process.env.STEPFOLD_REDIS_OUTAGE_PORT ?? 56379);

const SERVICES = fileURLToPath(new URL('../../../scripts/services.sh', import.meta.url));

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

/** Every key under `prefix` (SCAN, never KEYS). */
export async function keysUnder(client: Redis, prefix: string): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    out.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return out.sort();
}

/** Deletes every key under `prefix`. */
export async function dropPrefix(client: Redis, prefix: string): Promise<void> {
  const keys = await keysUnder(client, prefix);
  for (let i = 0; i < keys.length; i += 500) await client.del(...keys.slice(i, i + 500));
}

/** Runs `scripts/services.sh <command> redis` for the outage server's port. */
export async function outageServer(command: 'up' | 'stop' | 'start'): Promise<void> {
  await promisify(execFile)('bash', [SERVICES, command, 'redis'], {
    env: { ...process.env, STEPFOLD_REDIS_PORT: String(OUTAGE_PORT) },
    timeout: 600_000, // services.sh may wait for another run holding its lock
  });
}

/** A store on `client` under a fresh prefix, remembered so it can be dropped afterwards. */
export interface TestStore {
  store: Store;
  client: Redis;
  prefix: string;
}

/** Opens a store under a fresh prefix on `client`. */
export function openStore(client: Redis, label?: string, maxSnapshotBytes?: number): TestStore {
  const prefix = uniquePrefix(label);
  return { store: createRedisStore({ client, prefix, maxSnapshotBytes }), client, prefix };
}
