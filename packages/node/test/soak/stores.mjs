// @ts-check
// Opening, dropping and restarting the four stores the soak runs on, each under a namespace of its
// own (a table, key prefix, collection or DynamoDB table per run), with clients that fail fast while
// the server is away and reconnect by themselves when it is back.
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDynamoStore } from '@stepfold/store-dynamo';
import { createMongoStore } from '@stepfold/store-mongo';
import { createPostgresStore } from '@stepfold/store-postgres';
import { createRedisStore } from '@stepfold/store-redis';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import pg from 'pg';
import { testServer } from '../../../../scripts/services/test-servers.mjs';

/**
 * @typedef {import('../../../../scripts/services/test-servers.mjs').TestServer} TestServer
 * @typedef {import('../../../../scripts/services/test-servers.mjs').ServerName} ServerName
 */

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
 * Servers of the soak's own, for the runs that stop and start their server (the shared ones serve
 * other people's tests meanwhile): the services.sh name, the variable that fixes its port by hand
 * (unset: a port the OS picks, so two soaks at once never share a server), and its URL on a port.
 * DynamoDB (moto) has none: it keeps everything in memory, so a restart would lose every
 * instance (a different test than a restart that keeps them).
 * @type {Partial<Record<StoreKind, { service: ServerName, portVar: string, url: (port: number) => string }>>}
 */
export const RESTARTABLE = {
  postgres: {
    service: 'pg',
    portVar: 'STEPFOLD_SOAK_PG_PORT',
    url: (port) => `postgres://stepfold:stepfold@127.0.0.1:${port}/stepfold`,
  },
  redis: {
    service: 'redis',
    portVar: 'STEPFOLD_SOAK_REDIS_PORT',
    url: (port) => `redis://127.0.0.1:${port}`,
  },
  mongo: {
    service: 'mongo',
    portVar: 'STEPFOLD_SOAK_MONGO_PORT',
    url: (port) => `mongodb://127.0.0.1:${port}/stepfold`,
  },
};

/** @param {StoreKind} kind the URL of the shared test server of `kind` */
export function storeUrl(kind) {
  return URLS[kind];
}

/**
 * @typedef {object} OwnServer the soak's own server of one store kind, up
 * @property {string} url its URL
 * @property {number} port its port
 * @property {() => Promise<void>} stop stops it: the process goes away
 * @property {() => Promise<void>} start starts it again on the same port
 */

/**
 * @typedef {object} Owned a server {@link ownServer} made
 * @property {Promise<TestServer>} server it, once it has a port
 * @property {boolean} fixed its port came from its variable
 * @property {Promise<unknown>} queue its services.sh commands, run one after another
 * @property {boolean} gone taken down by {@link dropOwnServers}: later commands do nothing (a
 *   restart's `start` must not bring it back)
 */

/** The servers {@link ownServer} made, by kind. @type {Map<StoreKind, Owned>} */
const owned = new Map();

/**
 * Runs `command` on `e`'s server after the commands before it, unless the server is gone by then.
 * @param {Owned} e @param {(server: TestServer) => Promise<void>} command
 */
function serially(e, command) {
  const run = e.queue.then(async () => {
    if (!e.gone) await command(await e.server);
  });
  e.queue = run.catch(() => {});
  return run;
}

/**
 * The soak's own server of `kind`, up: made on the first call (on the port its variable names, else
 * one the OS picks), the same one after (up again if a restart left it down), until
 * {@link dropOwnServers}.
 * @param {StoreKind} kind
 * @returns {Promise<OwnServer>}
 */
export async function ownServer(kind) {
  const r = RESTARTABLE[kind];
  if (!r) throw new Error(`no restartable ${kind} server`);
  let e = owned.get(kind);
  if (!e) {
    const fixed = Boolean(process.env[r.portVar]);
    e = { server: testServer(r.service, r.portVar), fixed, queue: Promise.resolve(), gone: false };
    owned.set(kind, e);
  }
  const own = e;
  const { port } = await own.server;
  await serially(own, (server) => server.up()); // services.sh up: at once when it runs
  return {
    url: r.url(port),
    port,
    stop: () => serially(own, (server) => server.stop()),
    start: () => serially(own, (server) => server.start()),
  };
}

/**
 * Takes down every server {@link ownServer} made, after the command it is running (a restart's):
 * one on a port the OS picked is dropped with its data; one on a port fixed by its variable is
 * stopped and keeps its data (a failed run's tables stay there to look at: `services.sh start NAME
 * --port N`, then `drop NAME --port N`). Says what it did; never throws.
 * @param {(line: string) => void} [say]
 */
export async function dropOwnServers(say = () => {}) {
  const all = [...owned.entries()];
  owned.clear();
  await Promise.all(
    all.map(async ([kind, e]) => {
      const server = await e.server.catch(() => undefined);
      if (!server) return;
      const run = e.queue.then(() => (e.fixed ? server.stop() : server.drop()));
      e.gone = true;
      e.queue = run.catch(() => {});
      try {
        await run;
        const what = e.fixed
          ? 'stopped: its port was fixed, its data kept'
          : `dropped with its data (${RESTARTABLE[kind]?.portVar}=PORT keeps it: stopped, not dropped)`;
        say(`[${kind}] the soak's own server on port ${server.port}: ${what}`);
      } catch (err) {
        say(`[${kind}] the soak's own server on port ${server.port}: taking it down failed: ${err}`);
      }
    }),
  );
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
          await pool.query(`DROP FUNCTION IF EXISTS "${PG_SCHEMA}"."${ns}$search_sync"()`);
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
