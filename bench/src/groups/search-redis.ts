import { createRedisStore } from '@stepfold/store-redis';
import { Redis } from 'ioredis';
import { snapshotOfAbout } from '../payload.js';
import type { Group, Row } from '../row.js';
import { serviceUrls } from '../services.js';
import {
  largeRows,
  progressLog,
  type SearchSide,
  searchInstance,
  searchRows,
  searchSides,
  sizesOf,
  unmeasured,
} from './search-rows.js';

// The search rows of the Redis store: `search-redis` and `search-redis-range`, the PostgreSQL
// rows' queries on two stores (prefixes) of the same server, 1,000,000 and 10,000 instances of
// ~1 KB, each loaded through `store.create` (the store's own script writes the hash, the listing
// sets and the `search:<name>` sorted sets), a thousand creates in flight at a time (ioredis
// pipelines them). One client per store, measured alternately (ABBA). Equality is a ZRANGEBYLEX
// of `search:customerId` between two member prefixes, the range one of `search:total`; either
// reads the matching members then the ten hashes, whatever the set's size, so the ratio stays
// near 1 when nothing reads the whole set. The keys are unlinked afterwards (SCAN by prefix).

const SNAPSHOT_BYTES = 1024;
const LARGE = largeRows(1_000_000);
const SMALL = 10_000;
/** Creates in flight at once while loading. */
const IN_FLIGHT = 1000;

const prefixOf = (name: SearchSide['name']) => `stepfold-bench:{search-${name}-${process.pid}}:`;

async function load(client: Redis, side: SearchSide, log: (s: string) => void): Promise<void> {
  const store = createRedisStore({ client, prefix: prefixOf(side.name) });
  const base = snapshotOfAbout(SNAPSHOT_BYTES);
  for (let from = 0; from < side.rows; from += IN_FLIGHT) {
    const n = Math.min(IN_FLIGHT, side.rows - from);
    await Promise.all(
      Array.from({ length: n }, (_, j) => store.create(searchInstance(base, from + j, side.rows))),
    );
    if ((from + n) % 100_000 === 0 || from + n === side.rows)
      log(
        `${side.name}: ${(from + n).toLocaleString('en-US')} / ${side.rows.toLocaleString('en-US')} created`,
      );
  }
}

async function drop(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 5000);
    cursor = next;
    if (keys.length) await client.unlink(...keys);
  } while (cursor !== '0');
}

async function run(url: string): Promise<Row[]> {
  const log = progressLog('search-redis');
  const loader = new Redis(url, { maxRetriesPerRequest: 1 });
  const readers: Redis[] = [];
  try {
    process.stdout.write('\n');
    const sides = await searchSides({ small: SMALL, large: LARGE }, (name) => {
      const client = new Redis(url, { maxRetriesPerRequest: 1 });
      readers.push(client);
      return createRedisStore({ client, prefix: prefixOf(name) });
    });
    for (const side of sides) await load(loader, side, log);
    const mb = (Number((await loader.info('memory')).match(/used_memory:(\d+)/)?.[1]) / 2 ** 20) | 0;
    return await searchRows({
      name: 'search-redis',
      large: sides[1]!,
      small: sides[0]!,
      sizes: `${sizesOf(LARGE, SMALL)} of ~1 KB on one server (${mb} MB used with both loaded), one client each, alternating`,
      details: { largeRows: LARGE, smallRows: SMALL, usedMemoryMB: mb },
      log,
    });
  } finally {
    for (const name of ['small', 'large'] as const) await drop(loader, prefixOf(name)).catch(() => {});
    for (const c of readers) c.disconnect();
    loader.disconnect();
  }
}

/** The Redis store's search rows: `list` with `where` (equality, and a range in order) at 1,000,000 instances against 10,000. */
export const searchRedis: Group = {
  name: 'search-redis',
  async run() {
    const url = serviceUrls().redis;
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {});
    try {
      await probe.connect();
      await probe.ping();
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      return unmeasured('search-redis', `not measured: no Redis (${why}); run \`pnpm services\``);
    } finally {
      probe.disconnect();
    }
    return run(url);
  },
};
