import { createRunner, type Runner } from '@stepfold/engine';
import type { PostgresStore } from '@stepfold/store-postgres';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitForm } from './browser.js';
import { HOSTILE, handlers, moreHandlers } from './fixtures.js';
import { ARTIFACTS, type InspectorPage, openInspector, schemaStore } from './inspector-page.js';
import { JAN_2025, workflows } from './ops-setup.js';

// The inspector in Chromium, continued (pages-browser.test.ts): what a team runs operations from, in Chromium over PostgreSQL — list
// columns and the time filter, the signal select with its schema, the approver named at login,
// state labels, a tall workflow's failed step in the first viewport, no Cancel past a pivot, and
// the login rate limit. Screenshots land in test/artifacts/ (git-ignored).

const TOKEN = 'operations-browser-token-9c1e';
const VIEWPORT = { width: 1360, height: 900 };

describe('operations in Chromium on PostgreSQL', () => {
  const schema = `inspector_ops_${process.pid}_${Date.now().toString(36)}`;
  const pageErrors: string[] = [];
  let db: Awaited<ReturnType<typeof schemaStore>> | undefined;
  let store: PostgresStore;
  let worker: Runner;
  let ui: InspectorPage | undefined;
  let base: string;
  let page: Page;

  const version = async (id: string) => (await store.load(id))?.version;
  const submit = (selector: string) => submitForm(page, selector);
  /** Whether an element lies wholly inside the first viewport of the page (no scrolling). */
  async function inFirstViewport(selector: string) {
    const box = await page.locator(selector).boundingBox();
    const scrollY = await page.evaluate(() => window.scrollY);
    return box !== null && scrollY === 0 && box.y >= 0 && box.y + box.height <= VIEWPORT.height;
  }

  beforeAll(async () => {
    db = await schemaStore(schema);
    store = db.store;
    const all = { ...handlers(), ...moreHandlers };
    worker = createRunner({ store, workflows, handlers: all });
    const old = createRunner({ store, workflows, handlers: all, clock: () => JAN_2025 });
    await old.start('approval', 'claim-old', { amount: 3 });
    await worker.start('approval', 'claim-1', { amount: 40, note: HOSTILE.script });
    await worker.start('job', 'job-1', { size: 0 });
    await worker.start('dispatch', 'ship-1', {});
    await worker.start('tall', 'tall-1', {});
    await worker.idle();

    const columns = [
      { label: 'Amount', path: 'input.amount' },
      { label: 'Note', path: 'input.note' },
    ];
    ui = await openInspector({ store, workflows, auth: { token: TOKEN }, columns }, pageErrors);
    ({ base, page } = ui);
  });

  afterAll(async () => {
    await ui?.close();
    await db?.drop();
  });

  it('logs in with a name; the list shows active steps, last errors, host columns; filters by time', async () => {
    await page.goto(`${base}/`);
    await page.fill('input[name=name]', 'ops-alice');
    await page.fill('input[name=token]', TOKEN);
    await Promise.all([page.waitForURL(`${base}/`), page.click('button[type=submit]')]);
    expect(await page.locator('#who').textContent()).toBe('signed in as ops-alice');
    const headings = await page.locator('#instances thead th').allInnerTexts();
    expect(headings.slice(0, 7)).toEqual([
      'id',
      'workflow@version',
      'status',
      'active steps',
      'last error',
      'Amount',
      'Note',
    ]);
    const cells = async (id: string) => page.locator(`#instances tr[data-id="${id}"] td`).allInnerTexts();
    expect((await cells('claim-1')).slice(3, 7)).toEqual(['manager', '', '40', HOSTILE.script]);
    expect((await cells('job-1')).slice(3, 7)).toEqual([
      '',
      `TOO_SMALL: size 0 too small ${HOSTILE.img}`,
      '',
      '',
    ]);
    expect((await cells('ship-1'))[3]?.split(', ').sort()).toEqual(['await-label', 'await-pickup', 'ship']);
    expect((await cells('tall-1'))[4]).toBe('CARRIER_DOWN: the carrier API answered 502');
    await page.screenshot({ path: `${ARTIFACTS}ops-list.png`, fullPage: true });

    await page.fill('input[name=before]', '2025-06-01T00:00:00');
    await Promise.all([page.waitForURL(/before=/), page.click('form.filters button')]);
    expect(await page.locator('#instances td.id a').allInnerTexts()).toEqual(['claim-old']);
    await page.fill('input[name=before]', '');
    await page.fill('input[name=since]', '2025-06-01T00:00:00');
    await page.selectOption('select[name=workflow]', 'approval');
    await Promise.all([page.waitForURL(/since=/), page.click('form.filters button')]);
    expect(await page.locator('#instances td.id a').allInnerTexts()).toEqual(['claim-1']);
  });

  it('records the name given at login as the approver', async () => {
    await page.goto(`${base}/instances/claim-1`);
    expect(await page.locator('form[data-action=decide] .approver').textContent()).toBe(
      'Recorded as ops-alice',
    );
    expect(await page.locator('form[data-action=decide] input[name=by]').count()).toBe(0);
    const response = await submit('form[data-action=decide] button[value=approve]');
    expect(response.status()).toBe(303);
    expect((await store.load('claim-1'))!.steps.manager?.output).toEqual({
      decision: 'approve',
      by: 'ops-alice',
    });
  });

  it('past the pivot: no Cancel, the reason shown; the parallel wait is labelled waiting', async () => {
    await page.goto(`${base}/instances/ship-1`);
    await page.waitForSelector('body[data-diagram="rendered"]');
    expect(await page.locator('form[data-action=cancel]').count()).toBe(0);
    expect(await page.locator('#cancel-refusal').textContent()).toContain(
      'pivot step charge has completed, so nothing rolls back any more',
    );
    expect(await page.locator('#steps tr[data-step="ship"] td:nth-child(3) .badge').textContent()).toBe(
      'waiting',
    );
    expect(await page.locator('#step-strip li[data-step="ship"]').getAttribute('data-state')).toBe('waiting');
    await page.screenshot({ path: `${ARTIFACTS}ops-pivot.png`, fullPage: true });

    // A forged cancel (the form is not there; posted by hand with the page's CSRF token) meets the engine's refusal.
    const v = (await version('ship-1'))!;
    const csrf = await page.locator('form[data-action=abort] input[name=_csrf]').inputValue();
    const forged = await page.request.post(`${base}/instances/ship-1/cancel`, {
      form: { _csrf: csrf, version: String(v), reason: 'forged' },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(409);
    expect(await forged.text()).toContain('PAST_PIVOT');
    expect(await version('ship-1')).toBe(v);
  });

  it('the signal form offers the declared names with their shape, and checks the payload', async () => {
    await page.goto(`${base}/instances/ship-1`);
    const options = await page.locator('form[data-action=signal] select[name=name] option').allInnerTexts();
    expect(options).toEqual(['label', 'pickup']);
    await page.selectOption('form[data-action=signal] select[name=name]', 'pickup');
    const shape = page.locator('#signal-shapes .shape[data-signal="pickup"]');
    expect(await shape.isVisible()).toBe(true);
    expect(await page.locator('#signal-shapes .shape[data-signal="label"]').isVisible()).toBe(false);
    expect(await shape.locator('code.schema').textContent()).toBe(
      '{ carrier: string length ≥ 1, slot: integer > 0 }',
    );
    await page.screenshot({ path: `${ARTIFACTS}ops-signal-form.png`, fullPage: false });

    const v = (await version('ship-1'))!;
    await page.fill('form[data-action=signal] textarea[name=payload]', '{"carrier": "", "slot": 1.5}');
    const bad = await submit('form[data-action=signal] button');
    expect(bad.status()).toBe(400);
    const message = await page.locator('.flash.error').textContent();
    expect(message).toContain('the payload does not match what signal pickup declares; nothing was sent');
    expect(message).toContain('payload.slot');
    await page.screenshot({ path: `${ARTIFACTS}ops-signal-error.png` });
    expect(await version('ship-1')).toBe(v);

    await page.goto(`${base}/instances/ship-1`);
    await page.selectOption('form[data-action=signal] select[name=name]', 'pickup');
    await page.fill('form[data-action=signal] textarea[name=payload]', '{"carrier": "DHL", "slot": 2}');
    expect((await submit('form[data-action=signal] button')).status()).toBe(303);
    expect(
      await page.locator('#steps tr[data-step="await-label"] td:nth-child(3) .badge').textContent(),
    ).toBe('skipped');
    expect(await page.locator('#step-strip li[data-step="await-label"]').getAttribute('data-state')).toBe(
      'skipped',
    );
  });

  it('a tall workflow: the failed step is in the first viewport, and the diagram is scrolled to it', async () => {
    await page.goto(`${base}/instances/tall-1`);
    await page.waitForSelector('body[data-diagram="rendered"]');
    await page.screenshot({ path: `${ARTIFACTS}ops-tall-first-viewport.png` });
    expect(await inFirstViewport('#attention li.focus[data-step="s24"]')).toBe(true);
    expect(await inFirstViewport('#step-strip li.focus[data-step="s24"]')).toBe(true);
    expect(await page.locator('#attention li.focus').textContent()).toContain('CARRIER_DOWN');
    // The diagram's box is bounded and scrolled so the failed node shows inside it.
    const boxRect = (await page.locator('#diagram-box').boundingBox())!;
    const nodeRect = (await page.locator('#diagram-box g.focus-node').boundingBox())!;
    expect(nodeRect.y).toBeGreaterThanOrEqual(boxRect.y);
    expect(nodeRect.y + nodeRect.height).toBeLessThanOrEqual(boxRect.y + boxRect.height);
    await page.locator('#diagram-box').scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${ARTIFACTS}ops-tall-diagram.png` });
    // The link takes the user to the step's row.
    await page.click('#attention li.focus a');
    const row = (await page.locator('#steps tr#step-s24').boundingBox())!;
    expect(row.y).toBeGreaterThanOrEqual(0);
    expect(row.y + row.height).toBeLessThanOrEqual(VIEWPORT.height);
    // Last: a full-page capture resizes the viewport, which moves the diagram box's scroll.
    await page.screenshot({ path: `${ARTIFACTS}ops-tall-full.png`, fullPage: true });
    // No script error anywhere (the login page’s 401 and the refused signal’s 400 aside, which the browser logs).
    expect(pageErrors.filter((e) => !/status of 40[01]/.test(e))).toEqual([]);
  });

  it('login: a few failures, then 429 with Retry-After, even for the right token', async () => {
    const login = await ui!.context.newPage();
    const statuses: number[] = [];
    for (let i = 0; i < 6 && statuses.at(-1) !== 429; i++) {
      await login.goto(`${base}/login`);
      await login.fill('input[name=name]', 'mallory');
      await login.fill('input[name=token]', `wrong-token-${i}`);
      const [response] = await Promise.all([
        login.waitForResponse((r) => r.request().method() === 'POST'),
        login.click('button[type=submit]'),
      ]);
      statuses.push(response.status());
      if (response.status() === 429) expect(Number(response.headers()['retry-after'])).toBeGreaterThan(0);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    expect(await login.locator('.flash.error').textContent()).toMatch(
      /Too many failed logins; try again in \d+ s/,
    );
    await login.screenshot({ path: `${ARTIFACTS}ops-login-429.png` });
    const right = await login.request.post(`${base}/login`, { form: { token: TOKEN }, maxRedirects: 0 });
    expect(right.status()).toBe(429);
    await login.close();
  });
});
