import type { PayloadStore, SealingCodec, Store } from '@stepfold/engine';
import { keyFileCodec } from './codec-keys.js';
import { UsageError } from './exit-codes.js';

// Each adapter and its driver is imported when its scheme is used: loading all four (the AWS SDK and
// the MongoDB driver above all) would add most of a second to every command, `run` included.

/** A store opened from a URL, and how to close it together with the client the CLI made for it. */
export interface OpenedStore {
  store: Store;
  /** Which adapter: `postgres`, `redis`, `mongodb` or `dynamodb`. */
  kind: string;
  /**
   * The payload store on the same client (made on the first call, so a command that never
   * resolves a reference never builds one); its names come from the URL's `payload*` options,
   * else the adapter's defaults. A bad option is a usage error then.
   */
  payloads(): Promise<PayloadStore>;
  close(): Promise<void>;
  /** The codec of `--key-file`: `store` decodes (and encodes) through it. */
  codec?: SealingCodec | undefined;
  /** With a codec: the store as the database holds it (what the codec wraps), for a tool that wraps it itself. */
  encoded?: Store | undefined;
}

/** The store URL schemes, for messages and docs. */
export const STORE_SCHEMES = ['postgres://', 'redis://', 'mongodb://', 'dynamodb://'] as const;

// Short timeouts throughout: a command line should fail with STORE_UNAVAILABLE in seconds, not hang.
const CONNECT_TIMEOUT_MS = 3000;

/** Removes the CLI's own query options from the URL and returns their values. */
function takeParams(url: URL, names: readonly string[]): Record<string, string | undefined> {
  const known = new Set(names);
  const out: Record<string, string | undefined> = {};
  for (const name of names) out[name] = url.searchParams.get(name) ?? undefined;
  for (const name of [...url.searchParams.keys()]) if (known.has(name)) url.searchParams.delete(name);
  return out;
}

function parse(text: string): URL {
  try {
    return new URL(text);
  } catch {
    throw new UsageError(`not a store URL: ${JSON.stringify(text)} (expected ${STORE_SCHEMES.join(', ')})`);
  }
}

/** Runs an adapter's constructor; its TypeError or RangeError on a bad option is a usage error. */
function option<T>(make: () => T): T {
  try {
    return make();
  } catch (e) {
    if (e instanceof TypeError || e instanceof RangeError) throw new UsageError(e.message);
    throw e;
  }
}

/**
 * The `payloads()` and `close()` of an {@link OpenedStore}: the payload store is made once, on
 * demand, and closed (before the client) only if it was made.
 */
function lazyPayloads(
  make: () => Promise<PayloadStore>,
  closeClient: () => Promise<void>,
): Pick<OpenedStore, 'payloads'> & { closeAll(store: Store): Promise<void> } {
  let made: Promise<PayloadStore> | undefined;
  return {
    payloads: () => {
      made ??= make();
      return made;
    },
    closeAll: async (store) => {
      await store.close();
      if (made) await (await made.catch(() => undefined))?.close();
      await closeClient();
    },
  };
}

async function openPostgres(url: URL): Promise<OpenedStore> {
  const { default: pg } = await import('pg');
  const { createPostgresStore } = await import('@stepfold/store-postgres');
  const { schema, table, payloadSchema, payloadTable } = takeParams(url, [
    'schema',
    'table',
    'payloadSchema',
    'payloadTable',
  ]);
  const pool = new pg.Pool({
    connectionString: url.toString(),
    max: 2,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  // An idle connection the server drops must not crash the command; the next query reports it.
  pool.on('error', () => {});
  const store = option(() =>
    createPostgresStore({ pool, ...(schema ? { schema } : {}), ...(table ? { table } : {}) }),
  );
  const lazy = lazyPayloads(
    async () => {
      const { createPostgresPayloadStore } = await import('@stepfold/store-postgres');
      return option(() =>
        createPostgresPayloadStore({
          pool,
          ...(payloadSchema ? { schema: payloadSchema } : {}),
          ...(payloadTable ? { table: payloadTable } : {}),
        }),
      );
    },
    () => pool.end(),
  );
  return { store, kind: 'postgres', payloads: lazy.payloads, close: () => lazy.closeAll(store) };
}

async function openRedis(url: URL): Promise<OpenedStore> {
  const { Redis } = await import('ioredis');
  const { createRedisStore } = await import('@stepfold/store-redis');
  const { prefix, payloadPrefix } = takeParams(url, ['prefix', 'payloadPrefix']);
  const client = new Redis(url.toString(), {
    maxRetriesPerRequest: 1,
    connectTimeout: CONNECT_TIMEOUT_MS,
    commandTimeout: 10_000,
    // Give up after two reconnects: calls then fail (STORE_UNAVAILABLE) instead of waiting forever.
    retryStrategy: (attempt) => (attempt > 2 ? null : attempt * 200),
  });
  client.on('error', () => {});
  const store = option(() => createRedisStore({ client, ...(prefix ? { prefix } : {}) }));
  const lazy = lazyPayloads(
    async () => {
      const { createRedisPayloadStore } = await import('@stepfold/store-redis');
      return option(() =>
        createRedisPayloadStore({ client, ...(payloadPrefix ? { prefix: payloadPrefix } : {}) }),
      );
    },
    async () => client.disconnect(),
  );
  return { store, kind: 'redis', payloads: lazy.payloads, close: () => lazy.closeAll(store) };
}

async function openMongo(url: URL): Promise<OpenedStore> {
  const { collection, payloadCollection } = takeParams(url, ['collection', 'payloadCollection']);
  const db = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!db) throw new UsageError(`${url.protocol}// URL needs a database: mongodb://host:port/<db>`);
  const { MongoClient } = await import('mongodb');
  const { createMongoStore } = await import('@stepfold/store-mongo');
  const client = new MongoClient(url.toString(), {
    serverSelectionTimeoutMS: CONNECT_TIMEOUT_MS,
    connectTimeoutMS: CONNECT_TIMEOUT_MS,
  });
  const store = option(() => createMongoStore({ db: client.db(db), ...(collection ? { collection } : {}) }));
  const lazy = lazyPayloads(
    async () => {
      const { createMongoPayloadStore } = await import('@stepfold/store-mongo');
      return option(() =>
        createMongoPayloadStore({
          db: client.db(db),
          ...(payloadCollection ? { collection: payloadCollection } : {}),
        }),
      );
    },
    () => client.close(),
  );
  return { store, kind: 'mongodb', payloads: lazy.payloads, close: () => lazy.closeAll(store) };
}

async function openDynamo(url: URL): Promise<OpenedStore> {
  // The SDK warns on Node < 22 about its releases after January 2027; the CLI pins its SDK version,
  // so the notice is noise on every command. A user's own setting of the variable wins.
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
  const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  const { createDynamoStore } = await import('@stepfold/store-dynamo');
  const { region, endpoint, payloadTable } = takeParams(url, ['region', 'endpoint', 'payloadTable']);
  const table = decodeURIComponent(url.pathname.replace(/^\//, ''));
  // dynamodb://host:port/table talks to a local DynamoDB server such as moto (or any endpoint) over http;
  // dynamodb:///table (no host) to AWS itself, with the SDK's own credential chain.
  const target = endpoint ?? (url.host ? `http://${url.host}` : undefined);
  const envCredentials = process.env['AWS_ACCESS_KEY_ID'] && process.env['AWS_SECRET_ACCESS_KEY'];
  const client = new DynamoDBClient({
    region: region ?? process.env['AWS_REGION'] ?? process.env['AWS_DEFAULT_REGION'] ?? 'us-east-1',
    ...(target ? { endpoint: target } : {}),
    // A local endpoint accepts any key; use dummy ones unless the environment has real ones.
    ...(target && !envCredentials ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    maxAttempts: 2,
    requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, requestTimeout: 10_000 },
  });
  const store = option(() => createDynamoStore({ client, ...(table ? { table } : {}) }));
  const lazy = lazyPayloads(
    async () => {
      const { createDynamoPayloadStore } = await import('@stepfold/store-dynamo');
      return option(() =>
        createDynamoPayloadStore({ client, ...(payloadTable ? { table: payloadTable } : {}) }),
      );
    },
    async () => client.destroy(),
  );
  return { store, kind: 'dynamodb', payloads: lazy.payloads, close: () => lazy.closeAll(store) };
}

/**
 * Opens the store a URL names, with a client of its driver the CLI creates (and closes):
 * `postgres://…?schema=&table=`, `redis://…?prefix=`, `mongodb://…/db?collection=`,
 * `dynamodb://host:port/table?region=`, and for the payload store on the same client
 * `payloadSchema=&payloadTable=` (PostgreSQL), `payloadPrefix=`, `payloadCollection=`,
 * `payloadTable=` (DynamoDB). An unknown scheme or a bad option is a usage error.
 */
export async function openStore(text: string): Promise<OpenedStore> {
  const codec = await keyFileCodec();
  const opened = await openByScheme(text);
  return codec ? { ...opened, store: codec.wrap(opened.store), codec, encoded: opened.store } : opened;
}

async function openByScheme(text: string): Promise<OpenedStore> {
  const url = parse(text);
  switch (url.protocol) {
    case 'postgres:':
    case 'postgresql:':
      return openPostgres(url);
    case 'redis:':
    case 'rediss:':
      return openRedis(url);
    case 'mongodb:':
    case 'mongodb+srv:':
      return openMongo(url);
    case 'dynamodb:':
      return openDynamo(url);
    default:
      throw new UsageError(
        `unsupported store URL scheme ${JSON.stringify(url.protocol)} (expected ${STORE_SCHEMES.join(', ')})`,
      );
  }
}

/** The store URL from `--store` or `STEPFOLD_STORE`; a usage error when neither is set. */
export function storeUrlOf(flag: string | undefined): string {
  const url = flag ?? process.env['STEPFOLD_STORE'];
  if (!url) throw new UsageError('no store: pass --store <url> or set STEPFOLD_STORE');
  return url;
}

/** Opens the store, runs `body`, and always closes the store and its client. */
export async function withStore<T>(url: string, body: (opened: OpenedStore) => Promise<T>): Promise<T> {
  const opened = await openStore(url);
  try {
    return await body(opened);
  } finally {
    await opened.close().catch(() => {});
  }
}
