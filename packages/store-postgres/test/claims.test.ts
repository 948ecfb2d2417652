import type { Snapshot } from '@stepfold/engine';
import { makeTestSnapshot } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { createPostgresStore, DEFAULT_CLAIM_MS } from '../src/index.js';
import { TEST_SCHEMA } from './server.js';
import { useTestTables } from './test-tables.js';

const { pool, store: freshStore } = useTestTables('c');

const fresh = (claimMs?: number) => freshStore({ claimMs });

function due(id: string, wakeAt: number | null, version = 1): Snapshot {
  return makeTestSnapshot(id, {
    workflow: { name: 'wf', version: 1, hash: 'h' },
    status: 'waiting',
    version,
    wakeAt,
  });
}

const id = (i: number) => `d-${String(i).padStart(3, '0')}`;

describe('postgres listDue claims', () => {
  it('defaults to a 30 s lease', async () => {
    expect((await fresh()).claimMs).toBe(DEFAULT_CLAIM_MS);
    expect(DEFAULT_CLAIM_MS).toBe(30_000);
  });

  it('returns ids by (wakeAt, id) and claims them until now + claimMs', async () => {
    const store = await fresh(1000);
    await store.create(due('b', 20));
    await store.create(due('a', 20));
    await store.create(due('c', 10));
    await store.create(due('late', 5000));
    await store.create(due('never', null));
    expect(await store.listDue(100, 10)).toEqual(['c', 'a', 'b']);
    // Claimed: another poller at the same time gets nothing, until the lease has passed.
    expect(await store.listDue(100, 10)).toEqual([]);
    expect(await store.listDue(1099, 10)).toEqual([]);
    expect(await store.listDue(1100, 2)).toEqual(['c', 'a']);
    expect(await store.listDue(1100, 10)).toEqual(['b']);
    // Those leases (until 2100) have passed too.
    expect(await store.listDue(5000, 10)).toEqual(['c', 'a', 'b', 'late']);
  });

  it('hands a crashed poller’s ids out again once now passes the lease', async () => {
    const store = await fresh(30_000);
    await store.create(due('x', 1_000));
    expect(await store.listDue(2_000, 10)).toEqual(['x']);
    // The poller dies without saving: the id stays claimed for the lease, then comes back.
    expect(await store.listDue(31_999, 10)).toEqual([]);
    expect(await store.listDue(32_000, 10)).toEqual(['x']);
  });

  it('a save clears the claim', async () => {
    const store = await fresh(60_000);
    await store.create(due('s', 10));
    expect(await store.listDue(10, 10)).toEqual(['s']);
    await store.save(due('s', 10, 2), 1);
    expect(await store.listDue(10, 10)).toEqual(['s']);
  });

  it('gives concurrent pollers disjoint batches', async () => {
    const store = await fresh();
    const other = createPostgresStore({ pool, schema: TEST_SCHEMA, table: store.table });
    const n = 60;
    for (let i = 0; i < n; i++) await store.create(due(id(i), 1000 + (i % 7)));
    for (let round = 0; round < 3; round++) {
      const batches = await Promise.all([
        store.listDue(2000, 25),
        other.listDue(2000, 25),
        store.listDue(2000, 25),
      ]);
      const all = batches.flat();
      expect(new Set(all).size).toBe(all.length);
      for (const b of batches) expect(b.length).toBeLessThanOrEqual(25);
      if (round === 0) expect(all.length).toBe(n);
      else expect(all).toEqual([]);
    }
    // After the lease, every id is due again, in order.
    const again = await store.listDue(2000 + DEFAULT_CLAIM_MS, n + 1);
    const order = Array.from({ length: n }, (_, i) => ({ id: id(i), at: 1000 + (i % 7) }));
    order.sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : 1));
    expect(again).toEqual(order.map((x) => x.id));
  });

  it('never reports a fractional wake time early, and accepts extreme nows', async () => {
    const store = await fresh(0);
    await store.create(due('f', 1000.5));
    expect(await store.listDue(1000, 10)).toEqual([]);
    expect(await store.listDue(1001, 10)).toEqual(['f']);
    expect(await store.listDue(Number.NEGATIVE_INFINITY, 10)).toEqual([]);
    expect(await store.listDue(Number.POSITIVE_INFINITY, 10)).toEqual(['f']);
    expect(await store.listDue(5000, 0)).toEqual([]);
    await expect(store.listDue(Number.NaN, 10)).rejects.toThrow(RangeError);
  });
});
