import { createPostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { LimitRow } from '../src/commands/limits.js';
import { EXIT } from '../src/exit-codes.js';
import { cli, parsed, uniqueName } from './cli.js';
import { storeCommandSuite } from './store-commands.js';

const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';

describe('store commands on PostgreSQL', () => {
  storeCommandSuite(async () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
    pool.on('error', () => {});
    const schema = uniqueName('pg');
    const store = createPostgresStore({ pool, schema });
    await store.setup();
    const url = new URL(PG_URL);
    url.searchParams.set('schema', schema);
    return {
      url: url.toString(),
      store,
      destroy: async () => {
        await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await pool.end();
      },
    };
  });
});

describe('stepfold limits on PostgreSQL', () => {
  it('lists the flow counters of the table the URL names', async () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
    pool.on('error', () => {});
    const schema = uniqueName('pgflow');
    try {
      const store = createPostgresStore({ pool, schema });
      await store.setup();
      const now = Date.now();
      const need = [{ scope: 'orders/pay', key: 'c-1', limit: 1 }];
      await store.flow.acquire('o-1/1/pay/1#run#1', 'o-1', need, now, now + 3_600_000);
      await store.flow.acquire('o-2/1/pay/1#run#1', 'o-2', need, now, now + 3_600_000);
      const url = new URL(PG_URL);
      url.searchParams.set('schema', schema);
      const page = parsed<{ items: LimitRow[]; cursor: string | null }>(
        await cli(['limits', '--store', url.toString(), '--json']),
      );
      expect(page).toEqual({
        items: [
          {
            scope: 'orders/pay',
            key: 'c-1',
            kind: 'concurrency',
            limit: 1,
            holders: [{ holder: 'o-1/1/pay/1#run#1', until: now + 3_600_000 }],
            waiting: [{ holder: 'o-2/1/pay/1#run#1', instance: 'o-2', since: now }],
          },
        ],
        cursor: null,
      });
      const human = await cli(['limits', '--store', url.toString(), '--scope', 'orders/pay']);
      expect(human.code).toBe(EXIT.ok);
      expect(human.stdout).toMatch(/^orders\/pay\s+c-1\s+1 at once\s+1\s+1\s+\d{4}-/m);
    } finally {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    }
  });
});

describe('store URLs', () => {
  it('a closed port is STORE_UNAVAILABLE (exit 6)', async () => {
    const url = new URL(PG_URL);
    url.port = '1';
    const r = await cli(['list', '--store', url.toString()]);
    expect(r.code).toBe(EXIT.unavailable);
    expect(r.stderr).toMatch(/^error STORE_UNAVAILABLE: /);
  });

  it('a malformed URL, an unknown scheme or a bad option is a usage error (exit 2)', async () => {
    for (const url of [
      'not a url',
      'mysql://127.0.0.1/db',
      `${PG_URL}?schema=Bad-Name`,
      'mongodb://127.0.0.1:27017',
    ]) {
      const r = await cli(['list', '--store', url, '--json']);
      expect(r.code, url).toBe(EXIT.usage);
      expect(JSON.parse(r.stdout).error.code).toBe('USAGE');
    }
  });

  it('reads the URL from STEPFOLD_STORE', async () => {
    const url = new URL(PG_URL);
    url.port = '1';
    const r = await cli(['list'], { STEPFOLD_STORE: url.toString() });
    expect(r.code).toBe(EXIT.unavailable);
  });
});
