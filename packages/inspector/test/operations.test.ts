import { createMemoryStore, createRunner, type Store } from '@stepfold/engine';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { indexDefinitions } from '../src/definitions.js';
import { createInspector, type InspectorOptions } from '../src/index.js';
import { compactSchema, jsonSchemaOf } from '../src/payload-schema.js';
import {
  approval,
  dispatch,
  HOSTILE,
  handlers,
  job,
  moreHandlers,
  pickupSchema,
  TALL_STEPS,
  tall,
} from './fixtures.js';

// What a team runs operations from, through app.request over the memory store: list columns and
// the time filter, the declared signals and their schemas, the approver, state labels, the pivot
// refusal and the login rate limit. scenario-24.test.ts drives the same in Chromium.

const TOKEN = 'ops-token-0123456789';
const BEARER = { Authorization: `Bearer ${TOKEN}` };
const JAN_2025 = Date.UTC(2025, 0, 15, 12, 0, 0);
const workflows = [approval, job, dispatch, tall];

async function setup(options: Partial<InspectorOptions> = {}) {
  const store = createMemoryStore();
  const all = { ...handlers(), ...moreHandlers };
  const runner = createRunner({ store, workflows, handlers: all });
  const old = createRunner({ store, workflows, handlers: all, clock: () => JAN_2025 });
  await old.start('approval', 'a-old', { amount: 3 });
  await runner.start('approval', 'a-1', { amount: 42, note: HOSTILE.script });
  await runner.start('job', 'j-1', { size: 1 });
  await runner.start('dispatch', 'd-1', {});
  await runner.start('tall', 't-1', {});
  await runner.idle();
  const app = new Hono();
  app.route('/ops', createInspector({ store, workflows, auth: { token: TOKEN }, ...options }));
  return { store, runner, app };
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields);
const get = async (app: Hono, path: string, headers: Record<string, string> = BEARER) =>
  (await app.request(`/ops${path}`, { headers })).text();
const post = (
  app: Hono,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = BEARER,
) => app.request(`/ops${path}`, { method: 'POST', headers, body: form(fields) });
const version = async (store: Store, id: string) => String((await store.load(id))!.version);

describe('list', () => {
  it('shows active steps, the last error and the host’s columns (escaped, missing empty)', async () => {
    const { app } = await setup({
      columns: [
        { label: 'Amount', path: 'input.amount' },
        { label: 'Note', path: 'input.note' },
      ],
    });
    const text = await get(app, '/');
    expect(text).toContain('<th>Amount</th><th>Note</th>');
    const row = (id: string) => new RegExp(`<tr data-id="${id}">([\\s\\S]*?)</tr>`).exec(text)?.[1] ?? '';
    expect(row('a-1')).toContain('<td class="id active-steps">manager</td>');
    expect(row('a-1')).toContain('<td class="host-col" title="42">42</td>');
    expect(row('a-1')).toContain('&lt;script&gt;window.__pwned');
    expect(row('a-1')).not.toContain('<script>');
    expect(row('j-1')).toContain('<td class="host-col" title=""></td>'); // no amount: empty
    expect(row('j-1')).toContain('TOO_SMALL: size 1 too small &lt;img');
    expect(row('t-1')).toContain('CARRIER_DOWN: the carrier API answered 502');
  });

  it('refuses a column outside input/output at creation', () => {
    const store = createMemoryStore();
    const auth = { token: TOKEN };
    expect(() =>
      createInspector({ store, workflows, auth, columns: [{ label: 'x', path: 'steps.a' }] }),
    ).toThrow(/input.<field>/);
  });

  it('filters by updated time (read as UTC), combined with the other filters', async () => {
    const { app } = await setup();
    const ids = async (query: string) =>
      [...(await get(app, `/${query}`)).matchAll(/<tr data-id="([^"]+)"/g)].map((m) => m[1]);
    expect(await ids('?before=2025-06-01T00:00')).toEqual(['a-old']);
    expect(await ids('?since=2025-06-01T00:00&workflow=approval')).toEqual(['a-1']);
    expect(await ids('?since=2025-01-15T12:00:00&before=2025-01-15T12:00:01')).toEqual(['a-old']);
    expect(await ids('?since=not-a-time&prefix=a-')).toEqual(['a-1', 'a-old']); // unreadable: dropped
  });

  it('reads at most 20 pages of rows for a time filter, then says so and links on', async () => {
    const { app, runner, store } = await setup({ pageSize: 1 });
    for (let i = 0; i < 25; i++) await runner.start('job', `z-${String(i).padStart(2, '0')}`, { size: 5 });
    const old = createRunner({ store, workflows, execute: false, clock: () => JAN_2025 });
    await old.start('job', 'zz-old', { size: 5 });
    const read = async (query: string) => {
      const text = await get(app, `/${query}`);
      const next = /rel="next" href="\/ops\/([^"]+)"/.exec(text)?.[1]?.replace(/&amp;/g, '&');
      return { ids: [...text.matchAll(/<tr data-id="([^"]+)"/g)].map((m) => m[1]), next, text };
    };
    const first = await read('?before=2025-06-01T00:00');
    expect(first.ids).toEqual(['a-old']); // the page is full at one row
    const second = await read(first.next!);
    expect(second.ids).toEqual([]); // 20 rows read (d-1 … z-16), none in the time
    expect(second.text).toContain('id="scan-note"');
    expect(second.text).toContain('Read 20 instances (up to z-16)');
    const third = await read(second.next!);
    expect(third.ids).toEqual(['zz-old']);
    expect(third.next).toBeUndefined();
  });
});

describe('signals', () => {
  it('keeps the builder’s schemas: the index links each definition to the host’s object', () => {
    const indexed = indexDefinitions([dispatch]).of({
      workflow: { name: 'dispatch', version: 1, hash: '' },
    })!;
    const pickup = indexed.signals.find((s) => s.name === 'pickup')!;
    expect(pickup.schema).toBe(pickupSchema);
    expect(pickup.steps).toEqual(['await-pickup']);
    expect(compactSchema(jsonSchemaOf(pickup.schema))).toBe(
      '{ carrier: string length ≥ 1, slot: integer > 0 }',
    );
  });

  it('offers the declared signals in a select, with what each payload must look like', async () => {
    const { app } = await setup();
    const text = await get(app, '/instances/d-1');
    expect(text).toMatch(
      /<select name="name" required><option value="label">label<\/option><option value="pickup">/,
    );
    expect(text).toContain('{ carrier: string length ≥ 1, slot: integer &gt; 0 }');
  });

  it('decisions go through the decide form, not a raw signal (so the approver is recorded)', async () => {
    const { app, store } = await setup();
    const page = await get(app, '/instances/a-1');
    expect(page).not.toContain('<option value="manager">');
    const v = await version(store, 'a-1');
    const r = await post(app, '/instances/a-1/signal', {
      version: v,
      name: 'manager',
      payload: '{"decision":"approve"}',
    });
    expect(r.status).toBe(400);
    expect(await r.text()).toContain('use the Approve/Reject form');
    expect(await version(store, 'a-1')).toBe(v);
  });

  it('a payload that breaks the schema is a readable 400 and nothing is written', async () => {
    const { app, store } = await setup();
    const v = await version(store, 'd-1');
    for (const payload of ['{"carrier": "", "slot": 1.5}', '']) {
      const r = await post(app, '/instances/d-1/signal', { version: v, name: 'pickup', payload });
      expect(r.status, payload).toBe(400);
      const text = await r.text();
      expect(text).toContain('the payload does not match what signal pickup declares; nothing was sent');
      if (payload) expect(text).toContain('payload.slot');
    }
    expect(await version(store, 'd-1')).toBe(v);
    const ok = await post(app, '/instances/d-1/signal', {
      version: v,
      name: 'pickup',
      payload: '{"carrier": "DHL", "slot": 3}',
    });
    expect(ok.status).toBe(303);
    const after = (await store.load('d-1'))!;
    expect(after.steps['await-pickup']?.output).toEqual({ carrier: 'DHL', slot: 3 });
    // Join any: the label branch's wait is skipped, and the page says so.
    expect(after.steps['await-label']?.status).toBe('skipped');
    const page = await get(app, '/instances/d-1');
    expect(page).toMatch(
      /<tr data-step="await-label"[^>]*>[\s\S]*?<span class="badge s-skipped">skipped<\/span>/,
    );
  });
});

describe('approver and actions', () => {
  it('records the user the host’s authorize names, whatever the form says', async () => {
    const { app, store } = await setup({ auth: { authorize: (c) => c.req.header('x-user') ?? false } });
    const who = { 'x-user': 'ada' };
    const page = await get(app, '/instances/a-1', who);
    expect(page).toContain('Recorded as <strong>ada</strong>');
    expect(page).not.toContain('name="by"');
    const v = await version(store, 'a-1');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
    const headers = { ...who, Cookie: `stepfold_inspector_csrf=${csrf}` };
    const r = await post(
      app,
      '/instances/a-1/decide',
      { _csrf: csrf, version: v, step: 'manager', decision: 'approve', by: 'mallory' },
      headers,
    );
    expect(r.status).toBe(303);
    expect((await store.load('a-1'))!.steps.manager?.output).toEqual({ decision: 'approve', by: 'ada' });
    const v2 = await version(store, 'j-1');
    await post(app, '/instances/j-1/abort', { _csrf: csrf, version: v2, reason: 'duplicate' }, headers);
    expect((await store.load('j-1'))!.reason).toBe('duplicate (by ada)');
  });

  it('token mode: the name given at login is recorded, and cannot be edited in the cookie', async () => {
    const { app, store } = await setup();
    const login = await app.request('/ops/login', {
      method: 'POST',
      body: form({ token: TOKEN, name: 'Grace H.' }),
    });
    expect(login.status).toBe(303);
    const session = /stepfold_inspector_session=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')![1]!;
    const page = await get(app, '/instances/a-1', { Cookie: `stepfold_inspector_session=${session}` });
    expect(page).toContain('signed in as Grace H.');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
    const headers = { Cookie: `stepfold_inspector_session=${session}; stepfold_inspector_csrf=${csrf}` };
    const r = await post(
      app,
      '/instances/a-1/decide',
      {
        _csrf: csrf,
        version: await version(store, 'a-1'),
        step: 'manager',
        decision: 'reject',
        comment: 'no receipt',
      },
      headers,
    );
    expect(r.status).toBe(303);
    expect((await store.load('a-1'))!.steps.manager?.output).toEqual({
      decision: 'reject',
      by: 'Grace H.',
      reason: 'no receipt',
    });
    const forged = `${Buffer.from('Mallory').toString('base64url')}.${session.split('.')[1]}`;
    expect(
      (await app.request('/ops/', { headers: { Cookie: `stepfold_inspector_session=${forged}` } })).status,
    ).toBe(401);
  });

  it('past a completed pivot: no Cancel, the reason shown; a forged cancel is the engine’s 409', async () => {
    const { app, store } = await setup();
    const page = await get(app, '/instances/d-1');
    expect(page).not.toContain('data-action="cancel"');
    expect(page).toContain('data-code="PAST_PIVOT"');
    expect(page).toContain('pivot step charge has completed, so nothing rolls back any more');
    expect(page).toContain('data-action="abort"');
    const v = await version(store, 'd-1');
    const r = await post(app, '/instances/d-1/cancel', { version: v, reason: 'forged' });
    expect(r.status).toBe(409);
    expect(await r.text()).toContain('PAST_PIVOT');
    expect(await version(store, 'd-1')).toBe(v);
    expect((await store.load('d-1'))!.status).toBe('waiting');
  });
});

describe('instance page', () => {
  it('labels a parallel step whose branches wait as waiting, in the table and the diagram', async () => {
    const { app } = await setup();
    const page = await get(app, '/instances/d-1');
    expect(page).toMatch(/<tr data-step="ship"[^>]*>[\s\S]*?<span class="badge s-waiting">waiting<\/span>/);
    expect(page).toMatch(/class s_ship waiting/);
    expect(page).not.toMatch(/class [^\n]*s_ship[^\n]* running/);
  });

  it('puts a tall workflow’s failed step at the top, linked, and focuses the diagram on it', async () => {
    const { app } = await setup();
    const page = await get(app, '/instances/t-1');
    const attention = /<ul class="attention" id="attention">([\s\S]*?)<\/ul>/.exec(page)?.[1] ?? '';
    expect(attention).toContain('<li class="focus" data-step="s24" data-state="failed">');
    expect(attention).toContain('href="#step-s24"');
    expect(attention).toContain('CARRIER_DOWN: the carrier API answered 502');
    expect(page.indexOf('id="attention"')).toBeLessThan(page.indexOf('<h2>Actions</h2>'));
    expect(page).toContain('data-focus="s_s24"');
    expect(page).toContain('<tr data-step="s24" id="step-s24" class="focus">');
    expect([...page.matchAll(/<li class="chip [^"]*" data-step="(s\d\d)"/g)].map((m) => m[1])).toEqual(
      TALL_STEPS,
    );
  });
});

describe('login rate limit', () => {
  it('after the failures allowed, a 429 with Retry-After, even for the right token', async () => {
    const { app } = await setup({
      loginRateLimit: { max: 3, windowMs: 60_000 },
      clientAddress: (c) => c.req.header('x-test-ip'),
    });
    const login = (token: string, ip: string, name = '') =>
      app.request('/ops/login', {
        method: 'POST',
        headers: { 'x-test-ip': ip },
        body: form({ token, name }),
      });
    for (let i = 0; i < 3; i++) expect((await login('wrong-token-000', '10.0.0.1')).status).toBe(401);
    const limited = await login(TOKEN, '10.0.0.1');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await limited.text()).toContain('Too many failed logins');
    // A bearer header from a limited address is refused too, and wrong bearer tokens count.
    const bearer = (ip: string, token: string) =>
      app.request('/ops/', { headers: { 'x-test-ip': ip, Authorization: `Bearer ${token}` } });
    expect((await bearer('10.0.0.1', TOKEN)).status).toBe(429);
    for (let i = 0; i < 3; i++) expect((await bearer('10.3.0.1', 'wrong-token-000')).status).toBe(401);
    expect((await bearer('10.3.0.1', TOKEN)).status).toBe(429);
    // Another address is not limited…
    expect((await login(TOKEN, '10.0.0.2')).status).toBe(303);
    // …but a user name is, from whatever address.
    for (let i = 0; i < 3; i++)
      expect((await login('wrong-token-000', `10.1.0.${i}`, 'eve')).status).toBe(401);
    expect((await login(TOKEN, '10.2.0.1', 'Eve')).status).toBe(429);
  });

  it('can be turned off', async () => {
    const { app } = await setup({ loginRateLimit: false });
    for (let i = 0; i < 8; i++) {
      const r = await app.request('/ops/login', { method: 'POST', body: form({ token: 'wrong-token-000' }) });
      expect(r.status).toBe(401);
    }
  });
});
