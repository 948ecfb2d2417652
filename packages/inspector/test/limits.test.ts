import { createMemoryStore, type Store } from '@stepfold/engine';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createInspector } from '../src/index.js';
import { job } from './fixtures.js';
import { BEARER, TOKEN } from './ops-setup.js';

// The limits page: the store's flow counters, each key with its holders and waiting instances,
// read-only, behind the same credential as every page.

const HOUR = 3_600_000;

/** Customer c-1's order slot (limit 2) held twice with o-3 waiting, c-2's held once, two API starts. */
async function seeded() {
  const store = createMemoryStore();
  const now = Date.now();
  const orders = (key: string) => [{ scope: 'orders/pay', key, limit: 2 }];
  const flow = store.flow!;
  await flow.acquire('o-1/1/pay/1#run#1', 'o-1', orders('c-1'), now, now + HOUR);
  await flow.acquire('tenant/a/1/pay/1/3#run#2', 'tenant/a', orders('c-1'), now, now + HOUR);
  await flow.acquire('o-3/1/pay/1#run#1', 'o-3', orders('c-1'), now - 5000, now + HOUR);
  await flow.acquire('o-4/1/pay/1#run#1', 'o-4', orders('c-2'), now, now + HOUR);
  const api = [{ scope: 'api', key: '', limit: 10, periodMs: 60_000 }];
  await flow.acquire('o-1/1/call/1#run#1', 'o-1', api, now, now + HOUR);
  return store;
}

function app(store: Store) {
  const app = new Hono();
  app.route('/ops', createInspector({ store, workflows: [job], auth: { token: TOKEN }, pageSize: 2 }));
  return app;
}

const get = async (a: Hono, path: string, headers: Record<string, string> = BEARER) => {
  const res = await a.request(`/ops${path}`, { headers });
  return { status: res.status, html: await res.text() };
};

/** The table row of one key. */
const rowOf = (html: string, scope: string, key: string) =>
  new RegExp(`<tr data-scope="${scope}" data-key="${key}">([\\s\\S]*?)</tr>`).exec(html)?.[1];

describe('inspector: limits', () => {
  it('shows each key with its slots held out of the limit, the holders and the waiting instances', async () => {
    const a = app(await seeded());
    const all: string[] = [];
    let path = '/limits';
    for (;;) {
      const { status, html } = await get(a, path);
      expect(status).toBe(200);
      all.push(html);
      const next = /<a rel="next" href="\/ops([^"]+)"/.exec(html)?.[1];
      if (!next) break;
      path = next.replaceAll('&amp;', '&');
    }
    expect(all.length).toBe(2); // three keys at two per page
    const html = all.join('');
    const c1 = rowOf(html, 'orders/pay', 'c-1')!;
    expect(c1).toContain('2 at once');
    expect(c1).toContain('data-held="2"');
    expect(c1).toContain('data-waiting="1"');
    // Holders link to the instance that holds the slot, an id with a slash included.
    expect(c1).toContain('href="/ops/instances/o-1"');
    expect(c1).toContain('href="/ops/instances/tenant%2Fa"');
    expect(c1).toMatch(/<ul class="waiting"><li><a class="id" href="\/ops\/instances\/o-3">o-3<\/a>/);
    expect(rowOf(html, 'orders/pay', 'c-2')).toContain('data-waiting="0"');
    const api = rowOf(html, 'api', '')!;
    expect(api).toContain('10 per 60 s');
    expect(api).toContain('(one counter)');
    expect(html).toContain('id="nav-limits"');
  });

  it('narrows to one scope from its link', async () => {
    const a = app(await seeded());
    const { html } = await get(a, '/limits?scope=api');
    expect(rowOf(html, 'api', '')).toBeDefined();
    expect(html).not.toContain('data-scope="orders/pay"');
    expect(html).toContain('href="/ops/limits">All scopes');
  });

  it('says so on a store without flow counters, and asks for the credential like every page', async () => {
    const store = createMemoryStore();
    const bare: Store = { ...store, flow: undefined } as Store;
    const a = app(bare);
    const { status, html } = await get(a, '/limits');
    expect(status).toBe(200);
    expect(html).toContain('id="no-flow"');
    expect((await get(app(await seeded()), '/limits', {})).status).toBe(401);
  });
});
