import { createMemoryStore, createRunner } from '@stepfold/engine';
import { createSchedules } from '@stepfold/engine/schedules';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createInspector } from '../src/index.js';
import { job } from './fixtures.js';
import { BEARER, TOKEN } from './ops-setup.js';

// The schedules page: every schedule in the store, with pause/resume and trigger behind the same
// access rules as the instance actions (a credential, and a CSRF token for cookie sessions).

async function setup(auth: Parameters<typeof createInspector>[0]['auth'] = { token: TOKEN }) {
  // The real clock: the inspector writes with it, and its commands are due for the worker at once.
  const store = createMemoryStore();
  const schedules = createSchedules({ store, workflows: [job] });
  await schedules.create({ id: 'nightly', workflow: job, cron: '0 2 * * *', timeZone: 'Europe/Paris' });
  await schedules.create({ id: 'often', workflow: job, everyMs: 60_000, input: { size: 3 } });
  // The user's worker, driven by hand: it applies the commands and starts the runs.
  const worker = createRunner({
    store,
    workflows: [job, schedules.workflow],
    handlers: { runJob: () => ({ done: true }), ...schedules.handlers },
  });
  const work = async () => {
    while ((await worker.processDue()).length) {}
  };
  const app = new Hono();
  app.route('/ops', createInspector({ store, workflows: [job], auth }));
  return { app, store, schedules, work };
}

const page = async (app: Hono, headers: Record<string, string> = BEARER) =>
  (await app.request('/ops/schedules', { headers })).text();
const post = (app: Hono, path: string, headers: Record<string, string>, body: Record<string, string> = {}) =>
  app.request(`/ops${path}`, { method: 'POST', headers, body: new URLSearchParams(body) });

describe('inspector: schedules', () => {
  it('lists the schedules with their timing, state and next slot, linked from every page', async () => {
    const { app, schedules } = await setup();
    const html = await page(app);
    const next = (await schedules.describe('nightly')).nextSlot!;
    expect(html).toMatch(/<tr data-id="nightly">/);
    expect(html).toContain('cron 0 2 * * * (Europe/Paris)');
    expect(html).toContain('every 60 s');
    expect(html).toContain(new Date(next).toISOString().replace('T', ' ').replace('Z', ''));
    expect([0, 1]).toContain(new Date(next).getUTCHours()); // 02:00 in Paris, winter or summer
    expect(html).toMatch(/action="\/ops\/schedules\/often\/pause"/);
    expect(html).toMatch(/action="\/ops\/schedules\/often\/trigger"/);
    expect(await (await app.request('/ops/', { headers: BEARER })).text()).toContain('href="/ops/schedules"');
  });

  it('pause, resume and trigger write commands a worker applies', async () => {
    const { app, store, schedules, work } = await setup();
    expect((await post(app, '/schedules/often/pause', BEARER)).status).toBe(303);
    await work();
    expect((await schedules.describe('often')).status).toBe('paused');
    expect(await page(app)).toMatch(/action="\/ops\/schedules\/often\/resume"/);
    expect((await post(app, '/schedules/often/resume', BEARER)).status).toBe(303);
    const trigger = await post(app, '/schedules/often/trigger', BEARER);
    expect(trigger.status).toBe(303);
    const flash = decodeURIComponent(trigger.headers.get('set-cookie') ?? '');
    const runId = /run (often:manual:[^,]+),/.exec(flash)![1]!;
    await work();
    const d = await schedules.describe('often');
    expect(d).toMatchObject({ status: 'active', counts: { triggered: 1 } });
    expect((await store.load(runId))?.status).toBe('completed');
    expect((await post(app, '/schedules/often/explode', BEARER)).status).toBe(404);
    expect((await post(app, '/schedules/missing/pause', BEARER)).status).toBe(404);
  });

  it('nothing happens without a credential, or from a cookie session without the CSRF token', async () => {
    const { app, schedules, work } = await setup();
    expect((await app.request('/ops/schedules')).status).toBe(401);
    expect((await post(app, '/schedules/often/pause', {})).status).toBe(401);
    expect(
      (await post(app, '/schedules/often/pause', { Authorization: 'Bearer wrong-token-0' })).status,
    ).toBe(401);
    const login = await app.request('/ops/login', {
      method: 'POST',
      body: new URLSearchParams({ token: TOKEN }),
    });
    const session = /stepfold_inspector_session=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')![1]!;
    const cookie = { Cookie: `stepfold_inspector_session=${session}` };
    expect((await post(app, '/schedules/often/pause', cookie)).status).toBe(403);
    await work();
    expect((await schedules.describe('often')).status).toBe('active');
    // With the token the page's forms carry, the same post works.
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page(app, cookie))![1]!;
    const headers = { Cookie: `stepfold_inspector_session=${session}; stepfold_inspector_csrf=${csrf}` };
    expect((await post(app, '/schedules/often/pause', headers, { _csrf: csrf })).status).toBe(303);
    await work();
    expect((await schedules.describe('often')).status).toBe('paused');
  });

  it("records who paused, from the host's authorize", async () => {
    const { app, schedules, work } = await setup({ authorize: (c) => c.req.header('x-user') ?? false });
    expect((await post(app, '/schedules/often/pause', {})).status).toBe(403);
    const who = { 'x-user': 'ada', 'sec-fetch-site': 'same-origin' };
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page(app, who))![1]!;
    const headers = { ...who, Cookie: `stepfold_inspector_csrf=${csrf}` };
    expect((await post(app, '/schedules/often/pause', headers, { _csrf: csrf })).status).toBe(303);
    await work();
    expect(await schedules.describe('often')).toMatchObject({ status: 'paused', note: 'paused by ada' });
  });
});
