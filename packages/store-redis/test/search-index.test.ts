import { makeTestSnapshot, type Snapshot } from '@stepfold/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysFor } from '../src/index.js';
import { monitor } from './monitor.js';
import { dropPrefix, openStore, requireServer, type TestStore, testClient } from './server.js';

// The Redis store indexes search attributes in a sorted set per attribute: a `where` reads the
// members its condition selects, then the hashes of those instances only. MONITOR (filtered by
// this test's own prefix) counts every read of an instance's hash a listing makes. 100,000
// instances, created through the store (its own create script writes the hash and every index),
// a thousand creates in flight at a time (ioredis pipelines them).

const client = testClient();
let t: TestStore;

/** Instances stored. */
const COUNT = 100_000;
/** Customers: each has COUNT / CUSTOMERS instances. */
const CUSTOMERS = 10_000;
/** Creates in flight at once while loading. */
const IN_FLIGHT = 1000;

/** The id of instance `i`. */
const idOf = (i: number) => `o-${String(i).padStart(6, '0')}`;

/** Instance `i`: customer `c-<i mod CUSTOMERS>`, total `i`, every third one waiting. */
function row(i: number): Snapshot {
  return makeTestSnapshot(idOf(i), {
    status: i % 3 === 0 ? 'waiting' : 'running',
    search: { customerId: `c-${i % CUSTOMERS}`, total: i },
  });
}

/** The ids of customer `c-<n>`'s instances, in id order. */
const customerIds = (n: number) =>
  Array.from({ length: COUNT / CUSTOMERS }, (_, k) => idOf(n + k * CUSTOMERS));

/**
 * The instance hashes `run` reads (commands naming one of this store's instance keys), from a
 * MONITOR of its own (monitor.ts); an ECHO of a marker after `run` says every command was seen.
 */
async function instanceReads(run: () => Promise<unknown>): Promise<number> {
  const marker = `end-${Date.now()}`;
  let reads = 0;
  let ended!: () => void;
  const done = new Promise<void>((resolve) => {
    ended = resolve;
  });
  const m = await monitor(({ args }) => {
    if (args.includes(marker)) ended();
    else if (args.some((a) => a.startsWith(`${t.prefix}instance:`))) reads++;
  });
  try {
    await run();
    await client.echo(marker);
    await done;
  } finally {
    m.close();
  }
  return reads;
}

beforeAll(async () => {
  await requireServer(client);
  t = openStore(client, 'search-index');
  for (let from = 0; from < COUNT; from += IN_FLIGHT)
    await Promise.all(Array.from({ length: IN_FLIGHT }, (_, j) => t.store.create(row(from + j))));
}, 120_000);
afterAll(async () => {
  await dropPrefix(client, t.prefix);
  client.disconnect();
});

describe('redis store: search attributes indexed', () => {
  it('an equality reads the hashes of the matching instances only', async () => {
    expect(await client.zcard(keysFor(t.prefix).search('customerId'))).toBe(COUNT);
    let ids: string[] = [];
    const reads = await instanceReads(async () => {
      const page = await t.store.list({ limit: 50, where: { customerId: 'c-42' } });
      ids = page.items.map((s) => s.id);
    });
    expect(ids).toEqual(customerIds(42));
    // Each of the 10 matches among 100,000: its status and attributes, then its snapshot.
    expect(reads).toBe(2 * ids.length);
  });

  it('a page of an equality reads one candidate past the page, and its snapshots', async () => {
    let ids: string[] = [];
    const reads = await instanceReads(async () => {
      const page = await t.store.list({ limit: 4, where: { customerId: 'c-42' } });
      ids = page.items.map((s) => s.id);
    });
    expect(ids).toEqual(customerIds(42).slice(0, 4));
    // Every match's status and attributes (one batch of the set holds them all), the snapshots of
    // the page and of the one past it (which says a next page exists).
    expect(reads).toBe(10 + 5);
  });

  it('a range ordered by its attribute reads the range, and only the page of snapshots', async () => {
    let ids: string[] = [];
    const reads = await instanceReads(async () => {
      const page = await t.store.list({
        limit: 3,
        where: { total: { gte: COUNT - 10 }, status: 'waiting' },
        orderBy: { field: 'total', desc: true },
      });
      ids = page.items.map((s) => s.id);
    });
    expect(ids).toEqual([idOf(99_999), idOf(99_996), idOf(99_993)]);
    // The ten members of the range (99,999..99,990), then the page's three snapshots and the one past it.
    expect(reads).toBeLessThanOrEqual(10 + 4);
  });

  it('a range with both ends reads the members between them, ordered by it or not', async () => {
    for (const orderBy of ['total', undefined]) {
      let ids: string[] = [];
      const reads = await instanceReads(async () => {
        const page = await t.store.list({ limit: 50, where: { total: { gte: 100, lt: 105 } }, orderBy });
        ids = page.items.map((s) => s.id);
      });
      expect(ids).toEqual([100, 101, 102, 103, 104].map(idOf));
      // The five members between the ends, then their five snapshots: not the 99,895 above the lower end.
      expect(reads).toBe(10);
    }
  });

  it('keeps one member per attribute value, moved by saves and removed by deletes', async () => {
    const keys = keysFor(t.prefix);
    const c42 = customerIds(42);
    const s = (await t.store.load(c42[0]!))!;
    await t.store.save({ ...s, version: 2, search: { customerId: 'c-7' } }, 1);
    expect(await client.zcard(keys.search('customerId'))).toBe(COUNT);
    expect(await client.zcard(keys.search('total'))).toBe(COUNT - 1);
    const listed = async (customerId: string) =>
      (await t.store.list({ limit: 50, where: { customerId } })).items.map((x) => x.id);
    expect(await listed('c-42')).toEqual(c42.slice(1));
    expect(await listed('c-7')).toEqual([...customerIds(7), c42[0]!].sort());
    await t.store.delete(c42[1]!);
    expect(await client.zcard(keys.search('customerId'))).toBe(COUNT - 1);
    expect(await listed('c-42')).toEqual(c42.slice(2));
  });
});
