import { defineStore, makeTestSnapshot, type Snapshot, type Store } from '@stepfold/engine';
import { beforeAll, describe, expect, it } from 'vitest';
import { memoryDriver } from '../src/store/memory-driver.js';
import { emptyRows, type Row } from '../src/store/memory-rows.js';

// The memory store's search index (memory-search.ts) on 100,000 instances: an equality or `in` on
// an attribute reads the rows of the matching instances, not every row. Its rows are a Map that
// counts the rows read one by one (`get`) and the walks over all of them.

/** The memory store's rows, counting what a listing reads. */
class CountedRows extends Map<string, Row> {
  gets = 0;
  walks = 0;
  override get(id: string): Row | undefined {
    this.gets++;
    return super.get(id);
  }
  override values(): MapIterator<Row> {
    this.walks++;
    return super.values();
  }
  override keys(): MapIterator<string> {
    this.walks++;
    return super.keys();
  }
  override entries(): MapIterator<[string, Row]> {
    this.walks++;
    return super.entries();
  }
  override [Symbol.iterator](): MapIterator<[string, Row]> {
    this.walks++;
    return super[Symbol.iterator]();
  }
}

const COUNT = 100_000;
const CUSTOMERS = 10_000;

const idOf = (i: number) => `o-${String(i).padStart(6, '0')}`;
const order = (i: number): Snapshot =>
  makeTestSnapshot(idOf(i), {
    status: i % 2 ? 'waiting' : 'running',
    search: { customerId: `c-${i % CUSTOMERS}`, total: i },
  });
/** The ids of customer `c-<n>`, in id order. */
const customerIds = (n: number) =>
  Array.from({ length: COUNT / CUSTOMERS }, (_, k) => idOf(n + k * CUSTOMERS));

const rows = new CountedRows();
let store: Store;

/** What `run` read of the rows. */
async function reads(run: () => Promise<unknown>): Promise<{ gets: number; walks: number }> {
  rows.gets = 0;
  rows.walks = 0;
  await run();
  return { gets: rows.gets, walks: rows.walks };
}

const ids = async (query: Parameters<Store['list']>[0]) => (await store.list(query)).items.map((s) => s.id);

beforeAll(async () => {
  store = defineStore(
    { name: 'memory', isUnavailable: () => false, sizes: { asked: undefined, fallback: 1024 * 1024 } },
    memoryDriver({ ...emptyRows(), rows }),
  );
  for (let i = 0; i < COUNT; i++) await store.create(order(i));
}, 120_000);

describe(`memory store: search attributes indexed, ${COUNT} instances`, () => {
  it('an equality reads the rows of its matches only', async () => {
    let got: string[] = [];
    expect(await reads(async () => (got = await ids({ limit: 50, where: { customerId: 'c-42' } })))).toEqual({
      gets: 10,
      walks: 0,
    });
    expect(got).toEqual(customerIds(42));
  });

  it('`in` reads the rows of each value; other conditions are checked on those rows', async () => {
    let got: string[] = [];
    const where = { customerId: { in: ['c-1', 'c-2'] }, status: 'waiting', total: { gte: 50_000 } };
    expect(await reads(async () => (got = await ids({ limit: 50, where })))).toEqual({ gets: 20, walks: 0 });
    expect(got).toEqual([...customerIds(1)].filter((id) => Number(id.slice(2)) >= 50_000));
  });

  it('the smallest of several equalities drives', async () => {
    const where = { customerId: 'c-7', total: 7 };
    expect(await reads(() => ids({ limit: 50, where }))).toEqual({ gets: 1, walks: 0 });
    expect(await ids({ limit: 50, where })).toEqual([idOf(7)]);
  });

  it('a range alone walks every row (the reference)', async () => {
    expect(await reads(() => ids({ limit: 5, where: { total: { lt: 3 } } }))).toMatchObject({ walks: 1 });
    expect(await ids({ limit: 5, where: { total: { lt: 3 } } })).toEqual([0, 1, 2].map(idOf));
  });

  it('saves move entries, deletes remove them, a caller changing its snapshot changes nothing', async () => {
    const [first, second] = customerIds(5);
    const s = (await store.load(first!))!;
    const moved = { ...s, version: 2, search: { customerId: 'c-6' } };
    await store.save(moved, 1);
    moved.search.customerId = 'c-5';
    expect(await ids({ limit: 50, where: { customerId: 'c-5' } })).toEqual(customerIds(5).slice(1));
    expect(await ids({ limit: 50, where: { customerId: 'c-6' } })).toEqual(
      [first!, ...customerIds(6)].sort(),
    );
    expect(await ids({ limit: 50, where: { total: 5 } })).toEqual([]);
    await store.delete(second!);
    expect(await reads(() => ids({ limit: 50, where: { customerId: 'c-5' } }))).toEqual({
      gets: 8,
      walks: 0,
    });
    expect(await ids({ limit: 50, where: { customerId: 'c-5' } })).toEqual(customerIds(5).slice(2));
  });
});
