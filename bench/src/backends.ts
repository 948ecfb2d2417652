import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import type { Snapshot, Store } from '@stepfold/engine';
import { createMongoStore } from '@stepfold/store-mongo';
import { createPostgresStore } from '@stepfold/store-postgres';
import { createRedisStore, SCRIPTS } from '@stepfold/store-redis';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import pg from 'pg';
import { openChildStore } from './fleet/child-stores.js';
import { serviceUrls } from './services.js';

// One entry per store adapter: how to open a client of its own (driver client + adapter + the
// raw statement the adapter's save runs, written out by hand against the same client).

/** One driver client with the adapter over it and the adapter's save statement done by hand. */
export interface Connection {
  store: Store;
  /** The single conditional statement `store.save` runs, on the raw driver, same payload. */
  raw(snapshot: Snapshot, expectedVersion: number): Promise<void>;
  close(): Promise<void>;
}

export interface Backend {
  /** Row suffix: postgres, redis, mongo, dynamo. */
  name: string;
  /** The server actually answering (e.g. FerretDB for mongo). */
  server: string;
  /**
   * Set when that server emulates the database (FerretDB, moto): every row measured on it says so
   * in its note, as a figure of our test server and not evidence about the database itself.
   */
  testServer?: string | undefined;
  /** How long to write before measuring, so the server is warm. */
  warmupMs: number;
  /** Workflows the e2e row drives (sized so the row takes seconds, not minutes, on this server). */
  e2eWorkflows: number;
  /** The raw statement, for the results note. */
  statement: string;
  /** The server's URL (or endpoint). */
  url: string;
  /** Why the server cannot be used, or null when it answers. */
  unavailable(): Promise<string | null>;
  connect(): Promise<Connection>;
}

/** How a row's note names the server: with the test-server caveat when it emulates the database. */
export function serverNote(b: Backend): string {
  return b.testServer ? `${b.server}; ${b.testServer}` : b.server;
}

const urls = serviceUrls();
/** The database the bench's PostgreSQL rows use, so the tests' data is never touched. */
export const BENCH_DB = 'stepfold_bench';
const BENCH_TABLE = 'stepfold_bench';

async function reason(what: string, url: string, probe: () => Promise<unknown>): Promise<string | null> {
  try {
    await probe();
    return null;
  } catch (e) {
    return `no ${what} at ${url} (${e instanceof Error ? e.message : String(e)}); run \`pnpm services\``;
  }
}

const mongo: Backend = {
  name: 'mongo',
  server: 'FerretDB (MongoDB wire protocol)',
  testServer:
    'a test-server figure (FerretDB 1.24 on SQLite, as scripts/ferretdb builds and patches it), not evidence about MongoDB',
  warmupMs: 1000,
  e2eWorkflows: 60,
  url: urls.mongo,
  statement:
    'updateOne({_id, version: expected}, {$set: {version, status, workflow, wakeAt, snapshot: json}})',
  async unavailable() {
    const client = new MongoClient(urls.mongo, { serverSelectionTimeoutMS: 2000, connectTimeoutMS: 2000 });
    try {
      return await reason('MongoDB-protocol server', urls.mongo, () =>
        client.db('admin').command({ ping: 1 }),
      );
    } finally {
      await client.close().catch(() => {});
    }
  },
  async connect() {
    const client = new MongoClient(urls.mongo, { maxPoolSize: 4, serverSelectionTimeoutMS: 5000 });
    await client.connect();
    const db = client.db(BENCH_DB);
    const store = createMongoStore({ db });
    const coll = db.collection<{
      _id: string;
      version: number;
      status: string;
      workflow: string;
      wakeAt: number | null;
      snapshot: string;
    }>('stepfold_instances');
    return {
      store,
      async raw(s, expected) {
        const json = JSON.stringify(s);
        const r = await coll.updateOne(
          { _id: s.id, version: expected },
          {
            $set: {
              version: s.version,
              status: s.status,
              workflow: s.workflow.name,
              wakeAt: s.wakeAt,
              snapshot: json,
            },
          },
        );
        if (r.matchedCount !== 1) throw new Error(`raw update of ${s.id} matched nothing`);
      },
      close: () => client.close(),
    };
  },
};

/** The bench's own keys on the shared Redis (the tests use other prefixes). */
const REDIS_PREFIX = 'stepfold-bench:{bench}:';

/** The adapter's save script: a raw user runs the very same compare-and-set with EVALSHA. */
const REDIS_SAVE = SCRIPTS.find((s) => s.name === 'save')!;

const redis: Backend = {
  name: 'redis',
  server: 'Redis',
  warmupMs: 1000,
  e2eWorkflows: 3000,
  url: urls.redis,
  statement:
    "EVALSHA of the adapter's save script (version compare-and-set, index moves, HSET of json/version/status/workflow, due score) with keys and arguments built by hand",
  async unavailable() {
    const client = new Redis(urls.redis, {
      lazyConnect: true,
      connectTimeout: 2000,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => {});
    try {
      return await reason('Redis', urls.redis, async () => {
        await client.connect();
        await client.ping();
      });
    } finally {
      client.disconnect();
    }
  },
  async connect() {
    const client = new Redis(urls.redis, { maxRetriesPerRequest: 1 });
    const store = createRedisStore({ client, prefix: REDIS_PREFIX });
    await client.script('LOAD', REDIS_SAVE.lua);
    const p = REDIS_PREFIX;
    return {
      store,
      async raw(s, expected) {
        const json = JSON.stringify(s);
        const wf = s.workflow.name;
        const wakeAt = typeof s.wakeAt === 'number' && Number.isFinite(s.wakeAt) ? String(s.wakeAt) : '';
        const r = (await client.evalsha(
          REDIS_SAVE.sha,
          10,
          `${p}instance:${s.id}`,
          `${p}due`,
          `${p}status:${s.status}`,
          `${p}workflow:${wf}`,
          `${p}status-workflow:${s.status}#${wf}`,
          `${p}due-workflow:${wf}`,
          `${p}claims`,
          `${p}sent:${s.id}`,
          `${p}sent-due`,
          `${p}sent-claims`,
          s.id,
          json,
          String(s.version),
          s.status,
          wf,
          wakeAt,
          '', // no fairness key
          String(expected),
          p,
          '', // no wake notice
          '',
          '',
          '', // no search attributes
          '', // no match digest, no sent signals consumed
        )) as [number];
        if (r[0] !== 1) throw new Error(`raw save of ${s.id}: version moved or instance gone`);
      },
      close: async () => client.disconnect(),
    };
  },
};

function dynamoClient(): DynamoDBClient {
  return new DynamoDBClient({
    endpoint: urls.dynamo,
    region: 'us-east-1',
    credentials: { accessKeyId: 'stepfold', secretAccessKey: 'stepfold' },
    maxAttempts: 3,
  });
}

const dynamo: Backend = {
  name: 'dynamo',
  server: 'moto',
  testServer:
    'a test-server figure (moto 5.2.5 behind one lock, scripts/services/moto-server.py), not evidence about DynamoDB',
  // Python, not a JVM: nothing to warm up beyond the first requests.
  warmupMs: 2000,
  e2eWorkflows: 90,
  url: urls.dynamo,
  statement:
    "UpdateItem(SET the item's attributes, REMOVE the wake and claim ones it lacks, ConditionExpression '#version = :expected'): the adapter's own save request",
  async unavailable() {
    const client = dynamoClient();
    try {
      return await reason('DynamoDB', urls.dynamo, () => client.send(new ListTablesCommand({ Limit: 1 })));
    } finally {
      client.destroy();
    }
  },
  async connect() {
    // The raw save is the adapter's own UpdateItem, written out by hand (bench/src/fleet/child-stores.ts).
    const child = await openChildStore({
      kind: 'dynamo',
      url: urls.dynamo,
      table: BENCH_TABLE,
      groupCommit: false,
      concurrency: 1,
    });
    return {
      store: child.store,
      async raw(s, expected) {
        await child.update(
          {
            id: s.id,
            version: s.version,
            status: s.status,
            workflow: s.workflow.name,
            definition: `${s.workflow.name}@${s.workflow.version}@${s.workflow.hash}`,
            wakeAt: typeof s.wakeAt === 'number' && Number.isFinite(s.wakeAt) ? s.wakeAt : null,
            json: JSON.stringify(s),
          },
          expected,
        );
      },
      close: () => child.close(),
    };
  },
};

/** The URL of a sibling database on the same PostgreSQL server. */
export function pgDatabaseUrl(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Creates `database` on the server of `url` unless it exists. */
export async function ensurePgDatabase(url: string, database: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await admin.connect();
  try {
    const r = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (r.rowCount === 0) await admin.query(`CREATE DATABASE ${database}`);
  } finally {
    await admin.end();
  }
}

/** PostgreSQL, in a database of its own (`stepfold_bench`) so the tests' data is never touched. */
export function postgresBackend(): Backend {
  const url = pgDatabaseUrl(urls.pg, BENCH_DB);
  return {
    name: 'postgres',
    server: 'PostgreSQL',
    warmupMs: 1000,
    e2eWorkflows: 200,
    url: urls.pg,
    statement: `${PG_SAVE}, the JSON bound to $8 (snapshot_text), as the adapter does by default`,
    async unavailable() {
      return reason('PostgreSQL', urls.pg, () => ensurePgDatabase(urls.pg, BENCH_DB));
    },
    async connect() {
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      const store = createPostgresStore({ pool });
      return {
        store,
        async raw(s, expected) {
          // Prepared like the adapter's own statements, so both sides skip parsing and planning.
          const r = await pool.query({
            name: 'bench_raw_save',
            text: PG_SAVE,
            values: [
              s.id,
              expected,
              s.version,
              s.status,
              s.workflow.name,
              s.wakeAt === null ? null : Math.ceil(s.wakeAt),
              null, // the JSONB column: the adapter's default writes the text column
              JSON.stringify(s),
            ],
          });
          if (r.rowCount !== 1) throw new Error(`raw update of ${s.id} matched nothing`);
        },
        close: () => pool.end(),
      };
    },
  };
}

/** The statement the postgres adapter's save runs, JSON in `snapshot_text` ($8) as by default (kept in step with packages/store-postgres). */
const PG_SAVE =
  'UPDATE "stepfold"."instances" SET version = $3, status = $4, workflow = $5, wake_at = $6, ' +
  'claimed_until = NULL, snapshot = $7::jsonb, snapshot_text = $8 WHERE id = $1 AND version = $2';

export const backends: Backend[] = [postgresBackend(), redis, mongo, dynamo];
