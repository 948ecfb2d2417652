// @ts-check
// Opening, dropping and restarting the four stores the soak runs on, each under a namespace of its
// own (a table, key prefix, collection or DynamoDB table per run), with clients that fail fast while
// the server is away and reconnect by themselves when it is back.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDynamoStore } from '@stepfold/store-dynamo';
import { createMongoStore } from '@stepfold/store-mongo';
import { createPostgresStore } from '@stepfold/store-postgres';
import { createRedisStore } from '@stepfold/store-redis';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import pg from 'pg';

/** @typedef {'postgres' | 'redis' | 'mongo' | 'dynamo'} StoreKind */

/** Every store kind, in the order `pnpm soak` runs them. */
export const KINDS = /** @type {const} */ (['postgres', 'redis', 'mongo', 'dynamo']);

/** Schema of the soak's PostgreSQL tables. */
const PG_SCHEMA = 'stepfold_soak';

/** The shared test servers (`bash scripts/services.sh env`). */
const URLS = {
  postgres: process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold',
  redis: process.env.STEPFOLD_REDIS_URL ?? 'redis://127.0.0.1:6379',
  mongo: process.env.STEPFOLD_MONGO_URL ?? 'mongodb://127.0.0.1:27017/stepfold',
  dynamo: process.env.STEPFOLD_DYNAMO_ENDPOINT ?? 'http://127.0.0.1:8000',
};

/**
 * Ports of the soak's own servers; STEPFOLD_SOAK_PG_PORT, STEPFOLD_SOAK_REDIS_PORT and
 * STEPFOLD_SOAK_MONGO_PORT move them (two soaks at once on one machine need different ones).
 */
const SOAK_PORTS = {
  postgres: process.env.STEPFOLD_SOAK_PG_PORT || '55447',
  redis: process.env.STEPFOLD_SOAK_REDIS_PORT || '56397',
  mongo: process.env.STEPFOLD_SOAK_MONGO_PORT || '27047',
};

/**
 * Servers of the soak's own, on other ports, for the runs that stop and start their server: the
 * shared ones serve other people's tests meanwhile. DynamoDB (moto) has none: it keeps everything in
 * memory, so a restart would lose every instance (a different test than a restart that keeps them).
 * @type {Partial<Record<StoreKind, { service: string, portVar: string, port: string, url: string }>>}
 */
export const RESTARTABLE = {
  postgres: {
    service: 'pg',
    portVar: 'STEPFOLD_PG_PORT',
    port: SOAK_PORTS.postgres,
    url: `postgres://stepfold:stepfold@127.0.0.1:${SOAK_PORTS.postgres}/stepfold`,
  },
  redis: {
    service: 'redis',
    portVar: 'STEPFOLD_REDIS_PORT',
    port: SOAK_PORTS.redis,
    url: `redis://127.0.0.1:${SOAK_PORTS.redis}`,
  },
  mongo: {
    service: 'mongo',
    portVar: 'STEPFOLD_MONGO_PORT',
    port: SOAK_PORTS.mongo,
    url: `mongodb://127.0.0.1:${SOAK_PORTS.mongo}/stepfold`,
  },
};

/** @param {StoreKind} kind @param {boolean} restartable */
export function storeUrl(kind, restartable) {
  return restartable ? (RESTARTABLE[kind]?.url ?? URLS[kind]) : URLS[kind];
}

const SERVICES = fileURLToPath(new URL('../../../../scripts/services.sh', import.meta.url));

/**
 * Runs `services.sh <command>` for the soak's own server of `kind`.
 * @param {StoreKind} kind @param {'up' | 'stop' | 'start'} command
 */
export async function server(kind, command) {
  const s = RESTARTABLE[kind];
  if (!s) throw new Error(`no restartable ${kind} server`);
  await promisify(execFile)('bash', [SERVICES, command, s.service], {
    env: { ...process.env, [s.portVar]: s.port },
    timeout: 600_000, // services.sh may wait for another run holding its lock
  });
}

/**
 * A store of `kind` at `url` under namespace `ns`, and how to let go of its client. `claimMs`
 * undefined leaves the store's own default (what an application gets), which the soak measures.
 * @param {StoreKind} kind @param {string} url @param {string} ns @param {number | undefined} claimMs
 * @returns {{ store: import('@stepfold/engine').Store, close(): Promise<void>, drop(): Promise<void> }}
 */
export function openStore(kind, url, ns, claimMs) {
  // Left out when undefined, so each store applies its own default.
  const claim = claimMs === undefined ? {} : { claimMs };
  switch (kind) {
    case 'postgres': {
      const pool = new pg.Pool({ connectionString: url, max: 12, connectionTimeoutMillis: 2000 });
      pool.on('error', () => {}); // idle connections the server dropped: the pool replaces them
      // STEPFOLD_SOAK_PG_GROUP_COMMIT=1 runs the same soak with the store's group commit on.
      const groupCommit = process.env.STEPFOLD_SOAK_PG_GROUP_COMMIT === '1';
      const store = createPostgresStore({ pool, schema: PG_SCHEMA, table: ns, ...claim, groupCommit });
      return {
        store,
        close: async () => {
          await store.close();
          await pool.end();
        },
        drop: async () => {
          const tables = ['', '$sent', '$flow', '$stream', '$chunk', '$fair', '$search'].map(
            (t) => `"${PG_SCHEMA}"."${ns}${t}"`,
          );
          await pool.query(`DROP TABLE IF EXISTS ${tables.join(', ')}`);
          await pool.query(`DELETE FROM "${PG_SCHEMA}".stepfold_migrations WHERE table_name = $1`, [ns]);
        },
      };
    }
    case 'redis': {
      const client = new Redis(url, {
        maxRetriesPerRequest: 1,
        retryStrategy: (attempt) => Math.min(attempt * 100, 500),
        connectTimeout: 2000,
        commandTimeout: 10_000,
      });
      client.on('error', () => {}); // reconnects are expected while the server restarts
      const prefix = `soak:{${ns}}:`;
      return {
        store: createRedisStore({ client, prefix, ...claim }),
        close: async () => void client.disconnect(),
        drop: async () => {
          let cursor = '0';
          do {
            const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
            if (keys.length) await client.del(...keys);
            cursor = next;
          } while (cursor !== '0');
        },
      };
    }
    case 'mongo': {
      const client = new MongoClient(url, { serverSelectionTimeoutMS: 2000, connectTimeoutMS: 2000 });
      const db = client.db();
      return {
        store: createMongoStore({ db, collection: ns, ...claim }),
        close: () => client.close(),
        drop: async () =>
          void (await db
            .collection(ns)
            .drop()
            .catch(() => false)),
      };
    }
    case 'dynamo': {
      const client = new DynamoDBClient({
        endpoint: url,
        region: 'us-east-1',
        credentials: { accessKeyId: 'stepfold', secretAccessKey: 'stepfold' },
        maxAttempts: 2,
        requestHandler: { connectionTimeout: 1000, requestTimeout: 5000 },
      });
      return {
        store: createDynamoStore({ client, table: ns, ...claim, dueShards: 4 }),
        close: async () => client.destroy(),
        drop: async () => void (await client.send(new DeleteTableCommand({ TableName: ns }))),
      };
    }
  }
}
