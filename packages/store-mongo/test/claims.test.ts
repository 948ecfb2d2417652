import { makeTestSnapshot } from '@stepfold/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dueFilter } from '../src/due-claims.js';
import { createMongoStore, DEFAULT_CLAIM_MS, type InstanceDocument } from '../src/index.js';
import { requireServer, testClient } from './server.js';

// Two clients, as two worker processes would have: each store polls through its own connection.
const clients = [testClient(), testClient()] as const;
const dbName = 'stepfold_test';
const collection = `claims_${process.pid}`;
const [a, b] = clients.map((client) => createMongoStore({ db: client.db(dbName), collection }));
const docs = () => clients[0].db(dbName).collection<InstanceDocument>(collection);

beforeAll(async () => {
  for (const client of clients) await requireServer(client);
  await a!.setup();
});
afterAll(async () => {
  await clients[0]
    .db(dbName)
    .dropCollection(collection)
    .catch(() => {});
  for (const client of clients) await client.close();
});

const wf = (name: string) => ({ name, version: 1, hash: 'h' });

describe('mongo claims and lanes', () => {
  it('two stores racing listDue on 50 due instances get disjoint batches covering them all', async () => {
    const ids = Array.from({ length: 50 }, (_, i) => `race-${String(i).padStart(2, '0')}`);
    for (const [i, id] of ids.entries()) await a!.create(makeTestSnapshot(id, { wakeAt: i }));
    const got: string[][] = [[], []];
    // Several rounds each, interleaved: every call claims against whatever the other holds.
    await Promise.all(
      [a!, b!].map(async (store, w) => {
        for (let round = 0; round < 4; round++) got[w]!.push(...(await store.listDue(1000, 8)));
      }),
    );
    const rest = await a!.listDue(1000, 100);
    const all = [...got[0]!, ...got[1]!, ...rest];
    expect(new Set(all).size).toBe(all.length);
    expect([...all].sort()).toEqual(ids);
    expect(got[0]!.length + got[1]!.length).toBe(50 - rest.length);
    await a!.claims!.release(ids);
    await b!.claims!.release(ids);
    expect(await a!.listDue(1000, 100, { leaseMs: 0 })).toHaveLength(50);
  });

  it('a claim lapses claimMs after the listDue that took it, and a release or save ends it', async () => {
    const short = createMongoStore({ db: clients[0].db(dbName), collection, claimMs: 100 });
    await short.create(makeTestSnapshot('lapse-1', { workflow: wf('lapse'), wakeAt: 5 }));
    expect(await short.listDue(1000, 10, { workflow: 'lapse' })).toEqual(['lapse-1']);
    const doc = await docs().findOne({ _id: 'lapse-1' });
    expect(doc?.claimedUntil).toBe(1100);
    // Measured against listDue's `now`, not the wall clock: no sleeping.
    expect(await b!.listDue(1099, 10, { workflow: 'lapse' })).toEqual([]);
    expect(await b!.listDue(1100, 10, { workflow: 'lapse' })).toEqual(['lapse-1']);
    // b took it with the default lease.
    expect((await docs().findOne({ _id: 'lapse-1' }))?.claimedUntil).toBe(1100 + DEFAULT_CLAIM_MS);
    await b!.save(makeTestSnapshot('lapse-1', { version: 2, workflow: wf('lapse'), wakeAt: 6 }), 1);
    const saved = await docs().findOne({ _id: 'lapse-1' });
    expect(saved?.claimedUntil).toBeUndefined();
    expect(saved?.claimToken).toBeUndefined();
    expect(await a!.listDue(1200, 10, { workflow: 'lapse' })).toEqual(['lapse-1']);
    // b's release names it too, but the claim is a's: only a's own release ends it.
    await b!.claims!.release(['lapse-1']);
    expect(await b!.listDue(1200, 10, { workflow: 'lapse' })).toEqual([]);
    await a!.claims!.release(['lapse-1']);
    expect(await b!.listDue(1200, 10, { workflow: 'lapse' })).toEqual(['lapse-1']);
  });

  it('a claim writes the window token as claimToken; release matches on it', async () => {
    await a!.create(makeTestSnapshot('tok-1', { workflow: wf('tok'), wakeAt: 5 }));
    expect(await a!.listDue(1000, 10, { workflow: 'tok', token: 'worker-a' })).toEqual(['tok-1']);
    const doc = await docs().findOne({ _id: 'tok-1' });
    expect(doc).toMatchObject({ claimToken: 'worker-a', claimedUntil: 1000 + DEFAULT_CLAIM_MS });
    expect(typeof doc?.claimCall).toBe('string'); // the call's own nonce: how it knew what it won
    await a!.claims!.release(['tok-1'], 'worker-b');
    expect((await docs().findOne({ _id: 'tok-1' }))?.claimToken).toBe('worker-a');
    await b!.claims!.release(['tok-1'], 'worker-a'); // any store object, the same token
    const released = await docs().findOne({ _id: 'tok-1' });
    expect(released).toMatchObject({ dueAt: 5 });
    expect(released?.claimToken).toBeUndefined();
    expect(released?.claimCall).toBeUndefined();
  });

  it('claimMs follows the engine rule: a non-negative integer', () => {
    const db = clients[0].db(dbName);
    expect(createMongoStore({ db, collection, claimMs: 0 }).claimMs).toBe(0);
    for (const claimMs of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createMongoStore({ db, collection, claimMs })).toThrow(RangeError);
    }
  });

  it('the lane query is the one the compound { workflow, dueAt, _id } index serves', async () => {
    for (let i = 0; i < 20; i++) {
      await a!.create(
        makeTestSnapshot(`plan-${i}`, { workflow: wf(i % 2 ? 'plan-odd' : 'plan-even'), wakeAt: i }),
      );
    }
    expect(await a!.listDue(1000, 3, { workflow: 'plan-odd' })).toEqual(['plan-1', 'plan-3', 'plan-5']);
    // The same find listDue sends (see due.ts), explained.
    const plan = await docs().find(dueFilter(1000, 'plan-odd')).sort({ dueAt: 1, _id: 1 }).limit(3).explain();
    const text = JSON.stringify(plan);
    if ('filterPushdown' in plan) {
      // FerretDB 1.x, patched by our build (scripts/ferretdb/_patch/): the dueAt bound is an index
      // search and FerretDB's matcher applies the workflow to what it returns; see the README.
      expect(text).toContain('USING INDEX');
      expect(text).not.toMatch(/detail=SCAN/);
    } else {
      // MongoDB: an index scan of the lane index, with no blocking sort.
      expect(text).toContain('"IXSCAN"');
      expect(text).toContain('"indexName":"stepfold_due_lane"');
      expect(text).not.toContain('"stage":"SORT"');
    }
  });
});
