import { createMemoryStore, createRunner, type Store } from '@stepfold/engine';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createInspector, type InspectorAuth } from '../src/index.js';
import { approval, HOSTILE, HOSTILE_ID, handlers, job } from './fixtures.js';

// The inspector in-process over the memory store (app.request, no browser): auth, CSRF, the
// version pin, escaping and listing. pages-browser.test.ts drives the same pages in Chromium on PostgreSQL.

const TOKEN = 'test-token-0123456789';
const BEARER = { Authorization: `Bearer ${TOKEN}` };

async function setup(auth: InspectorAuth = { token: TOKEN }, wrap: (s: Store) => Store = (s) => s) {
  const store = createMemoryStore();
  const runner = createRunner({ store, workflows: [approval, job], handlers: handlers() });
  await runner.start('approval', 'a-1', { amount: 5, note: HOSTILE.script });
  await runner.start('job', 'j-1', { size: 1 });
  const app = new Hono();
  app.route('/ops', createInspector({ store: wrap(store), workflows: [approval, job], auth, pageSize: 2 }));
  return { store, runner, app };
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields);

/** The value of a cookie among a response's Set-Cookie headers. */
function cookie(res: Response, name: string): string | undefined {
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const [k, v] = (pair ?? '').split('=');
    if (k === name) return v;
  }
  return undefined;
}

describe('auth', () => {
  it('refuses to be created without auth or with a short token', () => {
    const store = createMemoryStore();
    expect(() =>
      createInspector({ store, workflows: [], auth: undefined as unknown as InspectorAuth }),
    ).toThrow(/auth is required/);
    expect(() => createInspector({ store, workflows: [], auth: { token: 'short' } })).toThrow(/8 characters/);
  });

  it('without a credential: a login page (401) for GET, 401 and no write for POST', async () => {
    const { app, store } = await setup();
    const list = await app.request('/ops/');
    expect(list.status).toBe(401);
    expect(await list.text()).toContain('name="token"');
    expect((await app.request('/ops/instances/a-1')).status).toBe(401);
    expect((await app.request('/ops/assets/mermaid.min.js')).status).toBe(401);
    const before = (await store.load('a-1'))!.version;
    for (const headers of [{}, { Authorization: 'Bearer wrong-token-000' }] as Record<string, string>[]) {
      const post = await app.request('/ops/instances/a-1/cancel', {
        method: 'POST',
        headers,
        body: form({ version: String(before) }),
      });
      expect(post.status).toBe(401);
    }
    expect((await store.load('a-1'))!.version).toBe(before);
  });

  it('the login form sets an HttpOnly SameSite=Strict cookie that opens the pages', async () => {
    const { app } = await setup();
    const wrong = await app.request('/ops/login', {
      method: 'POST',
      body: form({ token: 'nope-nope-nope' }),
    });
    expect(wrong.status).toBe(401);
    const ok = await app.request('/ops/login', {
      method: 'POST',
      body: form({ token: TOKEN, next: '/ops/instances/a-1' }),
    });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe('/ops/instances/a-1');
    const line = ok.headers.getSetCookie().find((l) => l.startsWith('stepfold_inspector_session='))!;
    expect(line).toMatch(/HttpOnly/);
    expect(line).toMatch(/SameSite=Strict/);
    expect(line).toMatch(/Path=\/ops/);
    expect(line).not.toContain(TOKEN); // a derived value, not the token itself
    const session = cookie(ok, 'stepfold_inspector_session')!;
    const page = await app.request('/ops/instances/a-1', {
      headers: { Cookie: `stepfold_inspector_session=${session}` },
    });
    expect(page.status).toBe(200);
  });

  it('login never redirects outside the inspector', async () => {
    const { app } = await setup();
    for (const next of ['https://evil.example/', '//evil.example/ops/', '/elsewhere', '/ops\\..\\x']) {
      const r = await app.request('/ops/login', { method: 'POST', body: form({ token: TOKEN, next }) });
      expect(r.headers.get('location'), next).toBe('/ops/');
    }
  });

  it('authorize(c): the host decides; refused requests get 403 and change nothing', async () => {
    const { app, store } = await setup({ authorize: (c) => c.req.header('x-user') === 'ada' });
    expect((await app.request('/ops/')).status).toBe(403);
    expect((await app.request('/ops/', { headers: { 'x-user': 'ada' } })).status).toBe(200);
    const post = await app.request('/ops/instances/j-1/abort', {
      method: 'POST',
      body: form({ version: '3' }),
    });
    expect(post.status).toBe(403);
    expect((await store.load('j-1'))!.status).toBe('dlq');
  });
});

describe('CSRF', () => {
  async function session(app: Hono) {
    const login = await app.request('/ops/login', { method: 'POST', body: form({ token: TOKEN }) });
    const page = await app.request('/ops/', {
      headers: { Cookie: `stepfold_inspector_session=${cookie(login, 'stepfold_inspector_session')}` },
    });
    return {
      session: cookie(login, 'stepfold_inspector_session')!,
      csrf: cookie(page, 'stepfold_inspector_csrf')!,
    };
  }

  it('a cookie-authenticated post needs the CSRF token and a same-origin Sec-Fetch-Site', async () => {
    const { app, store } = await setup();
    const { session: s, csrf } = await session(app);
    const headers = { Cookie: `stepfold_inspector_session=${s}; stepfold_inspector_csrf=${csrf}` };
    const version = String((await store.load('j-1'))!.version);
    const noToken = await app.request('/ops/instances/j-1/abort', {
      method: 'POST',
      headers,
      body: form({ version }),
    });
    expect(noToken.status).toBe(403);
    const crossSite = await app.request('/ops/instances/j-1/abort', {
      method: 'POST',
      headers: { ...headers, 'Sec-Fetch-Site': 'cross-site' },
      body: form({ version, _csrf: csrf }),
    });
    expect(crossSite.status).toBe(403);
    expect((await store.load('j-1'))!.status).toBe('dlq');
    const ok = await app.request('/ops/instances/j-1/abort', {
      method: 'POST',
      headers: { ...headers, 'Sec-Fetch-Site': 'same-origin' },
      body: form({ version, _csrf: csrf, reason: 'test' }),
    });
    expect(ok.status).toBe(303);
    expect((await store.load('j-1'))!.status).toBe('aborted');
  });
});

describe('actions', () => {
  it('approve through the bearer header: one write, the next task queued for workers, a flash', async () => {
    const { app, store } = await setup();
    const before = (await store.load('a-1'))!;
    const r = await app.request('/ops/instances/a-1/decide', {
      method: 'POST',
      headers: BEARER,
      body: form({ version: String(before.version), step: 'manager', decision: 'approve', by: 'bob' }),
    });
    expect(r.status).toBe(303);
    const after = (await store.load('a-1'))!;
    expect(after.version).toBe(before.version + 1);
    expect(after.steps.manager?.output).toEqual({ decision: 'approve', by: 'bob' });
    expect(after.tasks.pay?.queued).toBe(true);
    const flash = cookie(r, 'stepfold_inspector_flash')!;
    const page = await app.request('/ops/instances/a-1', {
      headers: { ...BEARER, Cookie: `stepfold_inspector_flash=${flash}` },
    });
    expect(await page.text()).toContain(`approved manager: version ${before.version} → ${after.version}`);
  });

  it('a stale version is a 409 and writes nothing', async () => {
    const { app, store, runner } = await setup();
    const seen = (await store.load('a-1'))!.version;
    await runner.signal('a-1', 'receipt', { early: true }); // buffered: the instance moves on
    const r = await app.request('/ops/instances/a-1/cancel', {
      method: 'POST',
      headers: BEARER,
      body: form({ version: String(seen) }),
    });
    expect(r.status).toBe(409);
    expect(await r.text()).toContain(
      `instance changed since you loaded this page (version ${seen} → ${seen + 1})`,
    );
    expect((await store.load('a-1'))!.status).toBe('waiting');
  });

  it('a write that lands between the version check and the action’s own write is a 409 too', async () => {
    let loads = 0;
    let race: (() => Promise<unknown>) | undefined;
    const { app, store, runner } = await setup({ token: TOKEN }, (s) => ({
      ...s,
      maxSnapshotBytes: s.maxSnapshotBytes,
      list: (q) => s.list(q),
      load: async (id) => {
        // The second load of the action is the runner's: someone else writes just before it.
        if (++loads === 2 && race) await race();
        return s.load(id);
      },
      save: (snap, v) => s.save(snap, v),
    }));
    const seen = (await store.load('a-1'))!.version;
    race = () => runner.signal('a-1', 'receipt', { early: true });
    const r = await app.request('/ops/instances/a-1/cancel', {
      method: 'POST',
      headers: BEARER,
      body: form({ version: String(seen) }),
    });
    expect(r.status).toBe(409);
    const after = (await store.load('a-1'))!;
    expect(after.version).toBe(seen + 1); // the other write only
    expect(after.status).toBe('waiting');
  });

  it('bad input is a 400 page that changes nothing', async () => {
    const { app, store } = await setup();
    const version = String((await store.load('j-1'))!.version);
    const cases: Record<string, string>[] = [
      { patch: '{not json' },
      { patch: '[1]' },
      { step: 'no such step!' },
    ];
    for (const fields of cases) {
      const r = await app.request('/ops/instances/j-1/requeue', {
        method: 'POST',
        headers: BEARER,
        body: form({ version, ...fields }),
      });
      expect(r.status, JSON.stringify(fields)).toBe(400);
    }
    const noVersion = await app.request('/ops/instances/j-1/requeue', { method: 'POST', headers: BEARER });
    expect(noVersion.status).toBe(400);
    expect(String((await store.load('j-1'))!.version)).toBe(version);
  });
});

describe('pages', () => {
  it('escape user data and send a CSP with a nonce', async () => {
    const { app, runner } = await setup();
    await runner.start('approval', HOSTILE_ID, { amount: 1, note: HOSTILE.img });
    await runner.signal(HOSTILE_ID, 'receipt', { html: HOSTILE.script });
    const page = await app.request(`/ops/instances/${encodeURIComponent(HOSTILE_ID)}`, { headers: BEARER });
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).not.toContain('<img src=x');
    expect(text).not.toContain('<script>window.__pwned');
    expect(text).toContain('&lt;img src=x onerror=');
    expect(text).toContain('&lt;script&gt;window.__pwned');
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9]+'/);
    const dlq = await (await app.request('/ops/instances/j-1', { headers: BEARER })).text();
    expect(dlq).toContain('size 1 too small &lt;img');
  });

  it('list: filters, id prefix and cursor paging', async () => {
    const { app, runner } = await setup();
    for (const id of ['p-1', 'p-2', 'p-3', 'q-1']) await runner.start('job', id, { size: 5 });
    const ids = async (query: string) => {
      const text = await (await app.request(`/ops/${query}`, { headers: BEARER })).text();
      const next = /rel="next" href="([^"]+)"/.exec(text)?.[1]?.replace(/&amp;/g, '&');
      return { ids: [...text.matchAll(/<td class="id"><a [^>]+>([^<]+)<\/a>/g)].map((m) => m[1]), next };
    };
    expect((await ids('?status=dlq')).ids).toEqual(['j-1']);
    expect((await ids('?workflow=approval')).ids).toEqual(['a-1']);
    const first = await ids('?prefix=p-');
    expect(first.ids).toEqual(['p-1', 'p-2']); // pageSize 2
    const second = await ids(first.next!.replace('/ops/', ''));
    expect(second).toEqual({ ids: ['p-3'], next: undefined });
    expect((await ids('?prefix=p-2')).ids).toEqual(['p-2']); // an id equal to the prefix
    expect((await ids('?prefix=p-&status=completed')).ids).toEqual(['p-1', 'p-2']);
  });
});
