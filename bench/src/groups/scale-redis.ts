import type { Snapshot } from '@stepfold/engine';
import { createRedisStore, type RedisStore } from '@stepfold/store-redis';
import { Redis } from 'ioredis';
import { compareAsync, median, type Rate } from '../measure.js';
import { snapshotOfAbout } from '../payload.js';
import { type Group, type Row, rateRow } from '../row.js';
import { serviceUrls } from '../services.js';

// Does a crowd of claimed instances slow down the Redis store's polls? Two stores (prefixes) on
// the same server, each with 11,000 instances of ~512 B:
//   clogged  10,000 due at the head of the due order, claimed for a day (a fleet with many runs
//            in flight, or workers killed holding their claims), then 1,000 due and unclaimed
//   clean    the same 10,000 with a wake time a day later (not due), then the same 1,000 due
// Each poll is store.listDue(now, 100) over the whole store (the `due` index, whose claims also
// move each instance's lane entry). The polling stores use claimMs 1 and every poll's `now` is
// 1 ms after the previous one's, so the last poll's 100 are due again and every poll does a
// poll's full work, the same on both for as long as the measurement runs.
// ratio = polls/s clogged / polls/s clean; a store whose claims leave the head of the due order
// keeps it near 1. `details.idsPerPoll` says what a poll returned on each (a store that steps
// over claimed entries returns fewer than 100, maybe none, on the clogged one).

const CLAIMED = 10_000;
const DUE = 1_000;
const LIMIT = 100;
const SNAPSHOT_BYTES = 512;
const T0 = 1_700_000_000_000;
const LATER = T0 + 86_400_000;
const DAY = 86_400_000;

interface Side {
  name: 'clogged' | 'clean';
  prefix: string;
  store: RedisStore;
  now: number;
}

async function fill(client: Redis, side: Side, base: Snapshot): Promise<void> {
  const setup = createRedisStore({ client, prefix: side.prefix, claimMs: DAY });
  const make = (id: string, wakeAt: number): Snapshot => ({ ...base, id, version: 1, wakeAt });
  const head = side.name === 'clogged' ? (i: number) => T0 + i : () => LATER;
  const all = [
    ...Array.from({ length: CLAIMED }, (_, i) => make(`h-${String(i).padStart(5, '0')}`, head(i))),
    ...Array.from({ length: DUE }, (_, j) => make(`d-${String(j).padStart(5, '0')}`, T0 + CLAIMED + j)),
  ];
  for (let i = 0; i < all.length; i += 500)
    await Promise.all(all.slice(i, i + 500).map((s) => setup.create(s)));
  if (side.name === 'clogged') {
    const claimed = await setup.listDue(T0 + CLAIMED - 1, CLAIMED);
    if (claimed.length !== CLAIMED) throw new Error(`clogged: claimed ${claimed.length} of ${CLAIMED}`);
  }
}

async function drop(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await client.unlink(...keys);
  } while (cursor !== '0');
}

async function run(client: Redis): Promise<Row[]> {
  const tag = `scale-redis-${process.pid}`;
  const sides: Side[] = (['clogged', 'clean'] as const).map((name) => {
    const prefix = `stepfold-bench:{${tag}-${name}}:`;
    return { name, prefix, store: createRedisStore({ client, prefix, claimMs: 1 }), now: T0 + 2 * CLAIMED };
  });
  try {
    const base = snapshotOfAbout(SNAPSHOT_BYTES);
    for (const s of sides) await fill(client, s, base);
    const returned: Record<string, number[]> = { clogged: [], clean: [] };
    const poll = (s: Side) => async () => {
      s.now += 1;
      const ids = await s.store.listDue(s.now, LIMIT);
      const seen = returned[s.name]!;
      if (seen.length < 1000) seen.push(ids.length);
    };
    const [clogged, clean]: Rate[] = await compareAsync(poll(sides[0]!), poll(sides[1]!), {
      concurrency: 1,
      warmupMs: 300,
      sampleMs: 500,
      samples: 12,
    });
    return [
      rateRow('scale-redis-listdue-claimed', clogged.hz, clean.hz, 'polls/s', 0.8, {
        note: `store.listDue(now, ${LIMIT}) with ${CLAIMED.toLocaleString('en-US')} claimed instances at the head of the due order vs none (the same ${CLAIMED.toLocaleString('en-US')} not due), ${DUE.toLocaleString('en-US')} due and unclaimed behind them on both, claimMs 1 and now + 1 ms per poll; one connection, alternating`,
        details: {
          cloggedSamples: clogged.samples.map(Math.round),
          cleanSamples: clean.samples.map(Math.round),
          roundRatioMedian:
            Math.round(median(clogged.samples.map((x, i) => x / clean.samples[i]!)) * 1000) / 1000,
          idsPerPoll: { clogged: median(returned['clogged']!), clean: median(returned['clean']!) },
        },
      }),
    ];
  } finally {
    for (const s of sides) await drop(client, s.prefix);
  }
}

/** listDue polls/s of the Redis store with 10,000 claimed instances at the head of the due order vs none. */
export const scaleRedis: Group = {
  name: 'scale-redis',
  async run() {
    const client = new Redis(serviceUrls().redis, { maxRetriesPerRequest: 1, lazyConnect: true });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.ping();
    } catch (e) {
      client.disconnect();
      return [
        {
          ...rateRow('scale-redis-listdue-claimed', null, null, 'polls/s', 0.8),
          note: `not measured: no Redis (${e instanceof Error ? e.message : String(e)}); run \`pnpm services\``,
        },
      ];
    }
    try {
      return await run(client);
    } finally {
      client.disconnect();
    }
  },
};
