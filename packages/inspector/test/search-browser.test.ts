import { makeTestSnapshot, type SearchValue, type Status, type Store } from '@stepfold/engine';
import { createPostgresStore } from '@stepfold/store-postgres';
import { createRedisStore } from '@stepfold/store-redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InspectorPage, openInspector, PG_URL } from './inspector-page.js';

// The inspector's attribute filter in a real Chromium over PostgreSQL and Redis: the conditions
// typed in the filter bar reach the store's `where` (its attribute index), and the list shows the
// attributes.

const REDIS_URL = process.env.STEPFOLD_REDIS_URL ?? 'redis://127.0.0.1:6379';
const TOKEN = 'search-browser-token-2c91';

/** A fresh store of one kind, and how to remove everything it wrote. */
interface Backend {
  store: Store;
  drop(): Promise<void>;
}

const tag = `inspector_search_${process.pid}_${Date.now().toString(36)}`;

/** The stores the filter is checked on, each under a name of its own. */
const BACKENDS: Record<string, () => Backend> = {
  PostgreSQL: () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
    pool.on('error', () => {});
    const store = createPostgresStore({ pool, schema: tag });
    return {
      store,
      drop: async () => {
        await store.close();
        await pool.query(`DROP SCHEMA IF EXISTS "${tag}" CASCADE`);
        await pool.end();
      },
    };
  },
  Redis: () => {
    const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const prefix = `stepfold-test:{${tag}}:`;
    const store = createRedisStore({ client, prefix });
    return {
      store,
      drop: async () => {
        await store.close();
        let cursor = '0';
        do {
          const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
          cursor = next;
          if (keys.length) await client.del(...keys);
        } while (cursor !== '0');
        client.disconnect();
      },
    };
  },
};

describe.each(Object.keys(BACKENDS))(
  'the inspector filters by search attributes in Chromium on %s',
  (kind) => {
    let backend: Backend | undefined;
    let store: Store;
    let ui: InspectorPage | undefined;
    let base: string;
    let page: Page;
    const pageErrors: string[] = [];
    const ids = () => page.locator('#instances td.id a').allInnerTexts();
    const filter = async (where: string) => {
      await page.fill('input[name=where]', where);
      await Promise.all([page.waitForURL(/where=/), page.click('form.filters button')]);
    };

    beforeAll(async () => {
      backend = BACKENDS[kind]!();
      store = backend.store;
      await store.setup();
      const rows: Array<[string, Status, Record<string, SearchValue>]> = [
        ['ord-1', 'waiting', { customerId: '42', total: 150, city: 'New York' }],
        ['ord-2', 'completed', { customerId: '42', total: 90 }],
        ['ord-3', 'waiting', { customerId: '7', total: 300 }],
        ['ord-4', 'waiting', { customerId: '42', total: 100 }],
        ['ord-5', 'running', {}],
      ];
      for (const [id, status, search] of rows)
        await store.create(
          makeTestSnapshot(id, { status, ...(Object.keys(search).length ? { search } : {}) }),
        );

      ui = await openInspector({ store, workflows: [], auth: { token: TOKEN } }, pageErrors, {
        consoleErrors: false,
      });
      ({ base, page } = ui);
      await page.goto(`${base}/`);
      await page.fill('input[name=token]', TOKEN);
      await Promise.all([page.waitForURL(`${base}/`), page.click('button[type=submit]')]);
    });

    afterAll(async () => {
      await ui?.close();
      await backend?.drop();
    });

    it('lists the instances whose attributes match the typed conditions, and shows their attributes', async () => {
      expect(await ids()).toEqual(['ord-1', 'ord-2', 'ord-3', 'ord-4', 'ord-5']);
      expect(await page.locator('#instances tr[data-id="ord-3"] td.attributes').textContent()).toBe(
        'customerId=7 total=300',
      );

      await filter('customerId=42 status=waiting');
      expect(await ids()).toEqual(['ord-1', 'ord-4']);
      // The filter survives the round trip: the box shows what was typed.
      expect(await page.inputValue('input[name=where]')).toBe('customerId=42 status=waiting');

      await filter('total>=100 total<300');
      expect(await ids()).toEqual(['ord-1', 'ord-4']);

      await filter('city="New York"');
      expect(await ids()).toEqual(['ord-1']);

      // The attribute filter combines with the form's others (an id prefix here).
      await page.fill('input[name=prefix]', 'ord-2');
      await filter('customerId=42');
      expect(await ids()).toEqual(['ord-2']);
      await page.fill('input[name=prefix]', '');

      await filter('customerId=nobody');
      expect(await ids()).toEqual([]);
      expect(await page.locator('#instances tbody').textContent()).toContain(
        'No instance matches these filters.',
      );
      expect(pageErrors).toEqual([]);
    });

    it('says what is wrong with text that is no condition, listing nothing (400)', async () => {
      const res = await page.goto(`${base}/?where=${encodeURIComponent('total!=3')}`);
      expect(res?.status()).toBe(400);
      expect(await page.locator('#where-error').textContent()).toMatch(/expected name=value/);
      expect(await ids()).toEqual([]);
      expect(await page.inputValue('input[name=where]')).toBe('total!=3');
    });
  },
);
