import { makeTestSnapshot, type Snapshot } from '@stepfold/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysFor } from '../src/index.js';
import { monitor } from './monitor.js';
import { dropPrefix, openStore, requireServer, type TestStore, testClient } from './server.js';

// The Redis store indexes search attributes in a sorted set per attribute: a `where` reads the
// members its condition selects, then the hashes of those instances only. MONITOR (filtered by
// this test's own prefix) counts every read of an instance's hash a listing makes.

const client = testClient();
let t: TestStore;

/** 300 instances: customer `c-<i mod 100>`, total `i`, every third one waiting. */
function row(i: number): Snapshot {
  const id = `o-${String(i).padStart(3, '0')}`;
  return makeTestSnapshot(id, {
    status: i % 3 === 0 ? 'waiting' : 'running',
    search: { customerId: `c-${i % 100}`, total: i },
  });
}

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
  for (let i = 0; i < 300; i++) await t.store.create(row(i));
});
afterAll(async () => {
  await dropPrefix(client, t.prefix);
  client.disconnect();
});

describe('redis store: search attributes indexed', () => {
  it('an equality reads the hashes of the matching instances only', async () => {
    let ids: string[] = [];
    const reads = await instanceReads(async () => {
      const page = await t.store.list({ limit: 10, where: { customerId: 'c-42' } });
      ids = page.items.map((s) => s.id);
    });
    expect(ids).toEqual(['o-042', 'o-142', 'o-242']);
    // Each match: its status and attributes, then its snapshot.
    expect(reads).toBe(6);
  });

  it('a range ordered by its attribute reads the range, and only the page of snapshots', async () => {
    let ids: string[] = [];
    const reads = await instanceReads(async () => {
      const page = await t.store.list({
        limit: 3,
        where: { total: { gte: 290 }, status: 'waiting' },
        orderBy: { field: 'total', desc: true },
      });
      ids = page.items.map((s) => s.id);
    });
    expect(ids).toEqual(['o-297', 'o-294', 'o-291']);
    // The ten members of the range (299..290), then the page's three snapshots and the one past it.
    expect(reads).toBeLessThanOrEqual(10 + 4);
  });

  it('a range with both ends reads the members between them, ordered by it or not', async () => {
    for (const orderBy of ['total', undefined]) {
      let ids: string[] = [];
      const reads = await instanceReads(async () => {
        const page = await t.store.list({ limit: 50, where: { total: { gte: 100, lt: 105 } }, orderBy });
        ids = page.items.map((s) => s.id);
      });
      expect(ids).toEqual(['o-100', 'o-101', 'o-102', 'o-103', 'o-104']);
      // The five members between the ends, then their five snapshots: not the 200 above the lower end.
      expect(reads).toBe(10);
    }
  });

  it('keeps one member per attribute value, moved by saves and removed by deletes', async () => {
    const keys = keysFor(t.prefix);
    expect(await client.zcard(keys.search('customerId'))).toBe(300);
    const s = (await t.store.load('o-042'))!;
    await t.store.save({ ...s, version: 2, search: { customerId: 'c-7' } }, 1);
    expect(await client.zcard(keys.search('total'))).toBe(299);
    const c42 = await t.store.list({ limit: 10, where: { customerId: 'c-42' } });
    expect(c42.items.map((x) => x.id)).toEqual(['o-142', 'o-242']);
    const c7 = await t.store.list({ limit: 10, where: { customerId: 'c-7' } });
    expect(c7.items.map((x) => x.id)).toEqual(['o-007', 'o-042', 'o-107', 'o-207']);
    await t.store.delete('o-142');
    expect(await client.zcard(keys.search('customerId'))).toBe(299);
    expect((await t.store.list({ limit: 10, where: { customerId: 'c-42' } })).items.map((x) => x.id)).toEqual(
      ['o-242'],
    );
  });
});
