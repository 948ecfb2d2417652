import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMongoStore } from '../src/index.js';
import { requireServer, testClient } from './server.js';

const client = testClient();
const db = client.db('stepfold_flow');
const name = `flow_${process.pid}`;

beforeAll(() => requireServer(client));
afterAll(async () => {
  await db.dropCollection(name).catch(() => {});
  await db.dropCollection(`${name}_flow`).catch(() => {});
  await client.close();
});

describe('mongo adapter: flow', () => {
  it('keeps a document per counter beside the instances, and deletes it once it holds nothing', async () => {
    const store = createMongoStore({ db, collection: name });
    await store.setup();
    const flow = store.flow!;
    const docs = db.collection(`${name}_flow`);
    const slot = { scope: 'orders', key: 'c-1', limit: 1 };
    await flow.acquire('h-1', 'i-1', [slot, { ...slot, periodMs: 1000 }], 0, 100);
    expect(
      await docs
        .find({}, { projection: { _id: 1 } })
        .sort({ _id: 1 })
        .toArray(),
    ).toEqual([{ _id: '["orders","c-1",0]' }, { _id: '["orders","c-1",1000]' }]);
    expect((await store.list({ limit: 10 })).items).toEqual([]);
    await flow.release(['h-1'], 50);
    // The rate's start stays in its window, and a period more for callers whose now lags: a
    // listing past its window shows nothing; one two periods on, past the lease, deletes it.
    expect(await docs.countDocuments()).toBe(1);
    expect(await flow.list({ limit: 10, now: 1000 })).toEqual({ items: [], cursor: null });
    expect(await docs.countDocuments()).toBe(1);
    expect(await flow.list({ limit: 10, now: 2000 })).toEqual({ items: [], cursor: null });
    expect(await docs.countDocuments()).toBe(0);
  });

  it('has no flow on a collection whose name cannot take `_flow`, unless flowCollection names one', () => {
    const long = 'c'.repeat(118);
    expect(createMongoStore({ db, collection: long }).flow).toBeUndefined();
    expect(createMongoStore({ db, collection: long, flowCollection: 'counters' }).flow).toBeDefined();
    expect(() => createMongoStore({ db, collection: 'c', flowCollection: 'system.x' })).toThrow(TypeError);
  });
});
