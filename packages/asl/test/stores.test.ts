import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  composition,
  createHarness,
  createRunner,
  createWorker,
  isTerminal,
  type Snapshot,
  type Store,
} from '@stepfold/engine';
import { createDynamoStore } from '@stepfold/store-dynamo';
import { createMongoStore } from '@stepfold/store-mongo';
import { createPostgresStore } from '@stepfold/store-postgres';
import { createRedisStore } from '@stepfold/store-redis';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type AslImport, aslHandlers, fromAsl, type LambdaFunction } from '../src/index.js';
import { ORDER_MACHINE, ORDER_RUNS, orderFunctions, SCORE_MACHINE, scoreFunctions } from './machines.js';

// Imported state machines run to their end with a runner and a worker on each store (the shared
// test servers; the URLs are the services' defaults unless the environment names others) and in
// the harness, with the same outputs everywhere.

const PG_URL = process.env['STEPFOLD_PG_URL'] ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';
const REDIS_URL = process.env['STEPFOLD_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const MONGO_URL = process.env['STEPFOLD_MONGO_URL'] ?? 'mongodb://127.0.0.1:27017/';
const DYNAMO_ENDPOINT = process.env['STEPFOLD_DYNAMO_ENDPOINT'] ?? 'http://127.0.0.1:8000';

const tag = `asl_${process.pid}_${Date.now().toString(36)}`;
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

/** Each store on its test server, under names of this run only (dropped afterwards). */
const STORES: Record<string, () => Promise<Store>> = {
  postgres: async () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 4, connectionTimeoutMillis: 3000 });
    pool.on('error', () => {});
    cleanups.push(async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${tag}" CASCADE`);
      await pool.end();
    });
    return createPostgresStore({ pool, schema: tag, table: 'instances' });
  },
  redis: async () => {
    const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    const prefix = `${tag}:{asl}:`;
    cleanups.push(async () => {
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        if (keys.length) await client.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      client.disconnect();
    });
    return createRedisStore({ client, prefix });
  },
  mongodb: async () => {
    const client = new MongoClient(MONGO_URL, { serverSelectionTimeoutMS: 3000 });
    const db = client.db('stepfold_test');
    cleanups.push(async () => {
      await db.dropCollection(tag).catch(() => {});
      await client.close();
    });
    return createMongoStore({ db, collection: tag });
  },
  dynamodb: async () => {
    const client = new DynamoDBClient({
      endpoint: DYNAMO_ENDPOINT,
      region: 'us-east-1',
      credentials: { accessKeyId: 'stepfold', secretAccessKey: 'stepfold' },
      maxAttempts: 2,
    });
    cleanups.push(async () => {
      await client.send(new DeleteTableCommand({ TableName: tag })).catch(() => {});
      client.destroy();
    });
    return createDynamoStore({ client, table: tag });
  },
};

const MACHINES: Array<{
  name: string;
  imported: AslImport;
  functions: () => Record<string, LambdaFunction>;
  runs: ReadonlyArray<{ id: string; input: unknown; output: unknown }>;
}> = [
  {
    name: 'order',
    imported: fromAsl(ORDER_MACHINE, { name: 'order' }),
    functions: orderFunctions,
    runs: ORDER_RUNS,
  },
  {
    name: 'score',
    imported: fromAsl(SCORE_MACHINE, { name: 'score' }),
    functions: scoreFunctions,
    runs: [{ id: 'ada', input: { name: 'ada', points: [4, 7] }, output: { result: 'ADA passed with 11' } }],
  },
];

/** Every run of every machine in the harness (virtual time): the outputs the stores must match. */
async function inHarness(): Promise<Record<string, unknown>> {
  const outputs: Record<string, unknown> = {};
  for (const m of MACHINES) {
    const functions = m.functions();
    for (const run of m.runs) {
      const h = createHarness(m.imported.definition, {
        workflows: m.imported.workflows,
        kinds: [composition],
      });
      const handlers = aslHandlers(m.imported, { resources: functions, now: () => h.now });
      h.start(run.input as never);
      await h.run(handlers as never, { timers: 'advance' });
      expect(h.status, `${m.name}/${run.id}`).toBe('completed');
      outputs[`${m.name}/${run.id}`] = h.snapshot.output;
    }
  }
  return outputs;
}

/** Every run of every machine on `store`, with a runner and a worker on the real clock. */
async function onStore(store: Store): Promise<Record<string, unknown>> {
  await store.setup();
  const outputs: Record<string, unknown> = {};
  for (const m of MACHINES) {
    const runner = createRunner({
      store,
      workflows: [m.imported.definition, ...m.imported.workflows],
      handlers: aslHandlers(m.imported, { resources: m.functions() }),
      kinds: [composition],
    });
    const worker = createWorker({ runner, poll: { minMs: 50, maxMs: 200 } });
    await worker.start();
    try {
      for (const run of m.runs) await runner.start(m.name, `${m.name}-${run.id}`, run.input);
      for (const run of m.runs) {
        let s: Snapshot | null = null;
        for (const end = Date.now() + 60_000; Date.now() < end; ) {
          s = await runner.get(`${m.name}-${run.id}`);
          if (s && isTerminal(s.status)) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(s?.status, `${m.name}/${run.id}: ${JSON.stringify(s?.error)}`).toBe('completed');
        outputs[`${m.name}/${run.id}`] = s?.output;
      }
    } finally {
      await worker.stop({ graceMs: 1000 });
    }
  }
  return outputs;
}

const expected = Object.fromEntries(
  MACHINES.flatMap((m) => m.runs.map((r) => [`${m.name}/${r.id}`, r.output])),
);

describe('imported state machines run on the stores', () => {
  it('in the harness: the outputs Step Functions gives', async () => {
    expect(await inHarness()).toEqual(expected);
  });

  for (const [name, open] of Object.entries(STORES))
    it(`on ${name} with a runner and a worker: the same outputs`, { timeout: 120_000 }, async () => {
      expect(await onStore(await open())).toEqual(expected);
    });
});
