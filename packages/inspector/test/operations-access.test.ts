import { describe, expect, it } from 'vitest';
import { TALL_STEPS } from './fixtures.js';
import { form, get, post, setup, TOKEN, version } from './ops-setup.js';

// What a team runs operations from, through app.request over the memory store (2/2): the
// approver, the pivot refusal, state labels, the tall workflow's focus and the login rate limit.

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
    expect(page).toMatch(/class [^\n]*\bs_ship\b[^\n]* waiting/);
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
