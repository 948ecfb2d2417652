import { makeTestSnapshot, type SearchValue, type Status, type Store } from '@stepfold/engine';
import { createPostgresStore } from '@stepfold/store-postgres';
import { createRedisStore } from '@stepfold/store-redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { InstanceRow } from '../src/snapshot-view.js';
import { orderOf, whereOf } from '../src/where-option.js';
import { cli, parsed, uniqueName } from './cli.js';

// `stepfold list --where name=value --where name>=value --order-by [-]name`: conditions on search
// attributes (and status, workflow) passed to `store.list`, executed by the store (PostgreSQL and
// Redis here).

const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';
const REDIS_URL = process.env.STEPFOLD_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('--where parsing', () => {
  it('combines repeated names and keeps status and workflow as strings', () => {
    let w = whereOf('total>=100');
    w = whereOf('total<200', w);
    w = whereOf('status=waiting', w);
    expect(w).toEqual({ total: { gte: 100, lt: 200 }, status: { in: ['waiting'] } });
    expect(() => whereOf('status>a')).toThrow(/= only/);
    expect(() => whereOf('no condition')).toThrow(/expected/);
    expect(orderOf('-total')).toEqual({ field: 'total', desc: true });
  });
});

/** A store of one kind seeded by the test, the URL the CLI opens it by, and its removal. */
interface Backend {
  store: Store;
  url: string;
  drop(): Promise<void>;
}

/** The stores `--where` is checked on. */
const BACKENDS: Record<string, () => Backend> = {
  PostgreSQL: () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
    pool.on('error', () => {});
    const schema = uniqueName('pgsearch');
    const url = new URL(PG_URL);
    url.searchParams.set('schema', schema);
    return {
      store: createPostgresStore({ pool, schema }),
      url: url.toString(),
      drop: async () => {
        await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await pool.end();
      },
    };
  },
  Redis: () => {
    const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const prefix = `${uniqueName('redissearch')}:{t}:`;
    const url = new URL(REDIS_URL);
    url.searchParams.set('prefix', prefix);
    return {
      store: createRedisStore({ client, prefix }),
      url: url.toString(),
      drop: async () => {
        const keys = await client.keys(`${prefix}*`);
        if (keys.length) await client.del(...keys);
        client.disconnect();
      },
    };
  },
};

describe.each(Object.keys(BACKENDS))('stepfold list --where on %s', (kind) => {
  it('filters and orders by search attributes on the server', async () => {
    const { store, url, drop } = BACKENDS[kind]!();
    try {
      await store.setup();
      const rows: Array<[string, Status, Record<string, SearchValue>]> = [
        ['o-1', 'waiting', { customerId: '42', total: 150 }],
        ['o-2', 'completed', { customerId: '42', total: 90 }],
        ['o-3', 'waiting', { customerId: '7', total: 300 }],
        ['o-4', 'waiting', { customerId: '42', total: 100 }],
      ];
      for (const [id, status, search] of rows) await store.create(makeTestSnapshot(id, { status, search }));
      const list = async (...args: string[]) =>
        parsed<{ items: InstanceRow[]; cursor: string | null }>(
          await cli(['list', '--store', url, '--json', ...args]),
        ).items.map((r) => r.id);
      expect(await list('--where', 'customerId=42', '--where', 'status=waiting')).toEqual(['o-1', 'o-4']);
      expect(await list('--where', 'total>=100', '--order-by', '-total')).toEqual(['o-3', 'o-1', 'o-4']);
      expect(await list('--where', 'customerId="7"')).toEqual(['o-3']);
      const text = await cli(['list', '--store', url, '--where', 'customerId=7']);
      expect(text.stdout).toMatch(/SEARCH/);
      expect(text.stdout).toMatch(/customerId=7 total=300/);
    } finally {
      await drop();
    }
  });
});
