import type { Snapshot } from '@stepfold/engine';
import { makeTestSnapshot } from '@stepfold/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMongoStore, DEFAULT_MAX_SNAPSHOT_BYTES, type InstanceDocument } from '../src/index.js';
import { requireServer, testClient } from './server.js';

const client = testClient();
const db = client.db('stepfold_test');
const collection = `adapter_${process.pid}`;

beforeAll(() => requireServer(client));
afterAll(async () => {
  await db.dropCollection(collection).catch(() => {});
  await client.close();
});

function snapshot(id: string, patch: Partial<Snapshot> = {}): Snapshot {
  return makeTestSnapshot(id, { workflow: { name: 'wf', version: 1, hash: 'h' }, ...patch });
}

describe('mongo adapter specifics', () => {
  const store = createMongoStore({ db, collection });

  it('setup is idempotent and creates the due, lane, status and workflow indexes', async () => {
    await store.setup();
    await store.setup();
    const indexes = await db.collection(collection).indexes();
    expect(indexes.map((i) => i.name).sort()).toEqual([
      '_id_',
      'stepfold_due',
      'stepfold_due_lane',
      'stepfold_search',
      'stepfold_sent_due',
      'stepfold_status',
      'stepfold_workflow',
    ]);
    expect(indexes.find((i) => i.name === 'stepfold_due')?.key).toEqual({ dueAt: 1, _id: 1 });
    expect(indexes.find((i) => i.name === 'stepfold_due_lane')?.key).toEqual({
      workflow: 1,
      dueAt: 1,
      _id: 1,
    });
  });

  it('stores the snapshot as a JSON string beside the indexed fields', async () => {
    await store.create(snapshot('layout-1', { wakeAt: 42, status: 'waiting' }));
    const doc = await db.collection<InstanceDocument>(collection).findOne({ _id: 'layout-1' });
    expect(doc).toMatchObject({
      version: 1,
      status: 'waiting',
      workflow: 'wf',
      definition: 'wf@1@h',
      wakeAt: 42,
      dueAt: 42,
    });
    expect(typeof doc?.snapshot).toBe('string');
  });

  it('round-trips payload keys MongoDB treats as operators or paths', async () => {
    const input = JSON.parse(
      '{"$set":{"version":99},"a.b":1,"__proto__":{"polluted":true},"$where":"1","":0}',
    );
    await store.create(snapshot('hostile-keys', { input }));
    await store.save(snapshot('hostile-keys', { version: 2, input, output: input }), 1);
    const loaded = await store.load('hostile-keys');
    expect(JSON.stringify(loaded?.input)).toBe(JSON.stringify(input));
    expect(loaded?.version).toBe(2);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses a collection name that is not plain', () => {
    expect(() => createMongoStore({ db, collection: 'a$b' })).toThrow(TypeError);
    expect(() => createMongoStore({ db, collection: 'system.x' })).toThrow(TypeError);
  });

  it('caps maxSnapshotBytes at 15 MiB (BSON documents hold 16 MiB)', () => {
    expect(DEFAULT_MAX_SNAPSHOT_BYTES).toBe(15 * 1024 * 1024);
    expect(() => createMongoStore({ db, maxSnapshotBytes: 16 * 1024 * 1024 })).toThrow(RangeError);
  });

  it('refuses filter values that are not strings instead of passing operators through', async () => {
    const bad = { $ne: 'x' } as unknown as string;
    await expect(store.list({ limit: 5, status: bad as Snapshot['status'] })).rejects.toThrow(TypeError);
    await expect(store.list({ limit: 5, cursor: bad })).rejects.toThrow(TypeError);
  });
});
