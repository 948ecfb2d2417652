// The stores a bench worker process (child.ts) can run on, each with the adapter's create and save
// written out by hand against the same driver client: the raw writes the e2e -limit rows compare
// our writes with. Each raw write is the very request the adapter issues for that snapshot (same
// statement, script or request, same fields), minus the engine around it.
import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { Store } from '@stepfold/engine';
import { createDynamoStore, DEFAULT_DUE_SHARDS, shardOf } from '@stepfold/store-dynamo';
import { createMongoStore } from '@stepfold/store-mongo';
import { createPostgresStore } from '@stepfold/store-postgres';
import { createRedisStore, SCRIPTS } from '@stepfold/store-redis';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import pg from 'pg';

/** The stores the bench's worker processes run on. */
export type StoreKind = 'postgres' | 'redis' | 'mongo' | 'dynamo';

/** One row as the adapter encodes a snapshot (what the store kit hands its driver). */
export interface RawRow {
  id: string;
  version: number;
  status: string;
  workflow: string;
  /** `name@version@hash`. */
  definition: string;
  /** The wake time the store indexes, or null. */
  wakeAt: number | null;
  json: string;
}

/** A worker process's store: the adapter, and its create and save done by hand on the same client. */
export interface ChildStore {
  store: Store;
  /** The adapter's create request for `row`. */
  insert(row: RawRow): Promise<void>;
  /** The adapter's conditional save request for `row`, expecting `expected` stored. */
  update(row: RawRow, expected: number): Promise<void>;
  /** Deletes the raw rows written under `prefix` (`ids` lists them), off the timed path. */
  removeRaw(prefix: string, ids: readonly string[]): Promise<void>;
  /** Statements sent through the store's pool so far (PostgreSQL only). */
  sent?(): number;
  close(): Promise<void>;
}

/** How a child opens its store: from the environment the fleet passes. */
export interface StoreEnv {
  kind: StoreKind;
  url: string;
  /** Table, collection or key prefix segment of the bench's instances. */
  table: string;
  groupCommit: boolean;
  /** Clients the raw loops and the runner share (the pool size of pg, MongoDB). */
  concurrency: number;
}

/** Opens the store `env` names. */
export async function openChildStore(env: StoreEnv): Promise<ChildStore> {
  if (env.kind === 'redis') return redisStore(env);
  if (env.kind === 'mongo') return mongoStore(env);
  if (env.kind === 'dynamo') return dynamoStore(env);
  return postgresStore(env);
}

/** Deletes `ids` through the adapter, 50 at a time (ids already gone are fine). */
async function deleteEach(store: Store, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 50)
    await Promise.all(ids.slice(i, i + 50).map((id) => store.delete(id).catch(() => false)));
}

function postgresStore(env: StoreEnv): ChildStore {
  const pool = new pg.Pool({ connectionString: env.url, max: env.concurrency + 2 });
  // Every statement counted (a run reports its statements per workflow).
  let sent = 0;
  const query = pool.query.bind(pool) as (...a: unknown[]) => unknown;
  pool.query = ((...a: unknown[]) => {
    sent++;
    return query(...a);
  }) as typeof pool.query;
  const store = createPostgresStore({ pool, table: env.table, groupCommit: env.groupCommit });
  const table = `"stepfold"."${env.table}"`;
  // The adapter's create and save (statements.ts): every column a save owns, the definition, the
  // fairness key ('' for none) and the search attributes (null for none) included.
  const insert = `INSERT INTO ${table} (id, version, status, workflow, wake_at, definition, fair_key, search, snapshot, snapshot_text) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10)`;
  const update = `UPDATE ${table} SET version = $3, status = $4, workflow = $5, wake_at = $6, definition = $7, fair_key = $8, search = $9::jsonb, claimed_until = NULL, claim_token = NULL, snapshot = $10::jsonb, snapshot_text = $11 WHERE id = $1 AND version = $2`;
  return {
    store,
    async insert(r) {
      const q = await pool.query({
        name: 'bench_raw_create',
        text: insert,
        values: [r.id, r.version, r.status, r.workflow, r.wakeAt, r.definition, '', null, null, r.json],
      });
      if (q.rowCount !== 1) throw new Error(`raw insert of ${r.id} matched nothing`);
    },
    async update(r, expected) {
      const q = await pool.query({
        name: 'bench_raw_save',
        text: update,
        // JSON in snapshot_text, as the adapter writes it by default.
        values: [
          r.id,
          expected,
          r.version,
          r.status,
          r.workflow,
          r.wakeAt,
          r.definition,
          '',
          null,
          null,
          r.json,
        ],
      });
      if (q.rowCount !== 1) throw new Error(`raw update of ${r.id} matched nothing`);
    },
    async removeRaw(prefix) {
      await pool.query(`DELETE FROM ${table} WHERE id LIKE $1`, [`${prefix}%`]);
    },
    sent: () => sent,
    close: () => pool.end(),
  };
}

async function redisStore(env: StoreEnv): Promise<ChildStore> {
  const client = new Redis(env.url, { maxRetriesPerRequest: 1 });
  // The bench's own keys on the shared server (the tests use other prefixes).
  const p = `stepfold-bench:{${env.table}}:`;
  const store = createRedisStore({ client, prefix: p });
  const create = SCRIPTS.find((s) => s.name === 'create')!;
  const save = SCRIPTS.find((s) => s.name === 'save')!;
  for (const s of [create, save]) await client.script('LOAD', s.lua);
  const indexKeys = (r: RawRow) => [
    `${p}status:${r.status}`,
    `${p}workflow:${r.workflow}`,
    `${p}status-workflow:${r.status}#${r.workflow}`,
    `${p}due-workflow:${r.workflow}`,
  ];
  // Then the fairness key: none.
  const row = (r: RawRow) => [r.id, r.json, String(r.version), r.status, r.workflow, r.wakeAt ?? '', ''];
  return {
    store,
    async insert(r) {
      const keys = [`${p}instance:${r.id}`, `${p}due`, `${p}all`, ...indexKeys(r)];
      // No wake hint: these writes announce nothing (their wake time is a running task's deadline).
      const ok = await client.evalsha(create.sha, keys.length, ...keys, ...row(r), p, '', '', '');
      if (ok !== 1) throw new Error(`raw create of ${r.id}: id taken`);
    },
    async update(r, expected) {
      const keys = [
        `${p}instance:${r.id}`,
        `${p}due`,
        ...indexKeys(r),
        `${p}claims`,
        `${p}sent:${r.id}`,
        `${p}sent-due`,
        `${p}sent-claims`,
      ];
      const args = [...row(r), String(expected), p, '', '', '', ''];
      const [code] = (await client.evalsha(save.sha, keys.length, ...keys, ...args)) as [number];
      if (code !== 1) throw new Error(`raw save of ${r.id}: version moved or instance gone`);
    },
    removeRaw: (_prefix, ids) => deleteEach(store, ids),
    async close() {
      await store.close?.();
      client.disconnect();
    },
  };
}

async function mongoStore(env: StoreEnv): Promise<ChildStore> {
  const client = new MongoClient(env.url, { maxPoolSize: env.concurrency + 2 });
  await client.connect();
  const db = client.db('stepfold_bench');
  const store = createMongoStore({ db, collection: env.table });
  const docs = db.collection<{ _id: string }>(env.table);
  const fields = (r: RawRow) => ({
    version: r.version,
    status: r.status,
    workflow: r.workflow,
    definition: r.definition,
    wakeAt: r.wakeAt,
    dueAt: r.wakeAt,
    snapshot: r.json,
  });
  return {
    store,
    async insert(r) {
      await docs.insertOne({ _id: r.id, ...fields(r) });
    },
    async update(r, expected) {
      const u = await docs.updateOne(
        { _id: r.id, version: expected },
        { $set: fields(r), $unset: { claimedUntil: '', claimToken: '', claimCall: '' } },
      );
      if (u.matchedCount !== 1) throw new Error(`raw update of ${r.id} matched nothing`);
    },
    async removeRaw(prefix) {
      await docs.deleteMany({ _id: { $regex: `^${prefix}` } });
    },
    close: () => client.close(),
  };
}

/** The adapter's due-index sort key: the IEEE-754 bits of the time, order-preserving, then the id. */
function dueKey(x: number, id: string): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x === 0 ? 0 : x);
  let hi = view.getUint32(0);
  let lo = view.getUint32(4);
  if (hi & 0x80000000) {
    hi = ~hi >>> 0;
    lo = ~lo >>> 0;
  } else hi = (hi | 0x80000000) >>> 0;
  return `${hi.toString(16).padStart(8, '0')}${lo.toString(16).padStart(8, '0')}#${id}`;
}

type Attr = { S: string } | { N: string };

async function dynamoStore(env: StoreEnv): Promise<ChildStore> {
  const client = new DynamoDBClient({
    endpoint: env.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'stepfold', secretAccessKey: 'stepfold' },
    maxAttempts: 3,
  });
  const TableName = env.table;
  const SHARDS = DEFAULT_DUE_SHARDS; // the store's own count (it is created with the default)
  const store = createDynamoStore({ client, table: TableName });
  const item = (r: RawRow): Record<string, Attr> => {
    const it: Record<string, Attr> = {
      id: { S: r.id },
      version: { N: String(r.version) },
      status: { S: r.status },
      workflow: { S: r.workflow },
      definition: { S: r.definition },
      listShard: { S: 'all' },
      snapshot: { S: r.json },
    };
    if (r.wakeAt !== null) {
      const shard = shardOf(r.id, SHARDS);
      it['wakeAt'] = { N: String(r.wakeAt) };
      it['dueShard'] = { S: `due#${shard}` };
      it['laneShard'] = { S: `${r.workflow}#${shard}` };
      it['dueKey'] = { S: dueKey(r.wakeAt, r.id) };
    }
    return it;
  };
  const WAKE = ['wakeAt', 'dueShard', 'laneShard', 'dueKey'];
  return {
    store,
    async insert(r) {
      await client.send(
        new PutItemCommand({
          TableName,
          Item: item(r),
          ConditionExpression: 'attribute_not_exists(#id)',
          ExpressionAttributeNames: { '#id': 'id' },
        }),
      );
    },
    async update(r, expected) {
      // One UpdateItem: SET what a save owns, REMOVE the wake attributes it has no more and any claim.
      const it = item(r);
      const names: Record<string, string> = {};
      const values: Record<string, Attr> = {};
      const set: string[] = [];
      let n = 0;
      for (const [name, value] of Object.entries(it)) {
        if (name === 'id') continue;
        names[`#${name}`] = name;
        values[`:v${n}`] = value;
        set.push(`#${name} = :v${n++}`);
      }
      const remove = [...WAKE.filter((a) => !(a in it)), 'claimedUntil', 'claimToken'].map((a) => {
        names[`#${a}`] = a;
        return `#${a}`;
      });
      values[`:v${n}`] = { N: String(expected) };
      try {
        await client.send(
          new UpdateItemCommand({
            TableName,
            Key: { id: { S: r.id } },
            UpdateExpression: `SET ${set.join(', ')} REMOVE ${remove.join(', ')}`,
            ConditionExpression: `#version = :v${n}`,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          }),
        );
      } catch (e) {
        if (e instanceof ConditionalCheckFailedException)
          throw new Error(`raw update of ${r.id}: version moved`);
        throw e;
      }
    },
    removeRaw: (_prefix, ids) => deleteEach(store, ids),
    async close() {
      client.destroy();
    },
  };
}
