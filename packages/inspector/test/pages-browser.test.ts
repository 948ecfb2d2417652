import { createRunner, type Runner } from '@stepfold/engine';
import type { PostgresStore } from '@stepfold/store-postgres';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitForm } from './browser.js';
import { approval, HOSTILE, HOSTILE_ID, handlers, job } from './fixtures.js';
import { ARTIFACTS, type InspectorPage, openInspector, schemaStore } from './inspector-page.js';

// The inspector in a real Chromium over PostgreSQL. Instances are driven by a real
// runner with handlers (the "worker"); the inspector's actions only hand events off, and the worker
// takes the tasks they queue. Screenshots land in test/artifacts/ (git-ignored).

const TOKEN = 'pages-browser-token-7f3a';

describe('the inspector in Chromium on PostgreSQL', () => {
  const schema = `inspector_${process.pid}_${Date.now().toString(36)}`;
  const seen = { runJob: [] as unknown[] };
  const dialogs: string[] = [];
  const pageErrors: string[] = [];
  let db: Awaited<ReturnType<typeof schemaStore>> | undefined;
  let store: PostgresStore;
  let worker: Runner;
  let ui: InspectorPage | undefined;
  let base: string;
  let page: Page;

  const version = async (id: string) => (await store.load(id))?.version;
  const submit = (selector: string) => submitForm(page, selector);

  beforeAll(async () => {
    db = await schemaStore(schema);
    store = db.store;
    worker = createRunner({ store, workflows: [approval, job], handlers: handlers(seen) });
    await worker.start('approval', 'inv-human-1', { amount: 40 });
    await worker.start('approval', 'inv-human-2', { amount: 7 });
    await worker.start('job', 'inv-dlq-1', { size: 1 });
    await worker.start('job', 'inv-dlq-2', { size: 0 });
    await worker.start('job', 'other-done', { size: 9 });
    await worker.start('approval', HOSTILE_ID, { amount: 1, note: HOSTILE.script, html: HOSTILE.img });
    await worker.signal(HOSTILE_ID, 'receipt', { comment: HOSTILE.script, more: HOSTILE.img }); // buffered

    ui = await openInspector({ store, workflows: [approval, job], auth: { token: TOKEN } }, pageErrors);
    ({ base, page } = ui);
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
  });

  afterAll(async () => {
    await ui?.close();
    await db?.drop();
  });

  it('logs in with the token and filters the list', async () => {
    const login = await page.goto(`${base}/`);
    expect(login?.status()).toBe(401);
    await page.fill('input[name=token]', TOKEN);
    await Promise.all([page.waitForURL(`${base}/`), page.click('button[type=submit]')]);
    const ids = () => page.locator('#instances td.id a').allInnerTexts();
    expect(await ids()).toEqual([
      HOSTILE_ID,
      'inv-dlq-1',
      'inv-dlq-2',
      'inv-human-1',
      'inv-human-2',
      'other-done',
    ]);

    await page.selectOption('select[name=status]', 'waiting');
    await Promise.all([page.waitForURL(/status=waiting/), page.click('form.filters button')]);
    expect(await ids()).toEqual([HOSTILE_ID, 'inv-human-1', 'inv-human-2']);

    await page.selectOption('select[name=status]', '');
    await page.fill('input[name=prefix]', 'inv-');
    await page.selectOption('select[name=workflow]', 'job');
    await Promise.all([page.waitForURL(/prefix=inv-/), page.click('form.filters button')]);
    expect(await ids()).toEqual(['inv-dlq-1', 'inv-dlq-2']);
    await page.goto(`${base}/`);
    await page.screenshot({ path: `${ARTIFACTS}list-page.png`, fullPage: true });
  });

  it('approves the human step: a new version with the next task queued for the workers', async () => {
    const before = (await store.load('inv-human-1'))!;
    await page.goto(`${base}/?prefix=inv-human-1`);
    await Promise.all([page.waitForURL(/instances\/inv-human-1$/), page.click('text=inv-human-1')]);
    // The diagram is drawn by the Mermaid bundle the inspector serves itself (no CDN).
    await page.waitForSelector('body[data-diagram="rendered"]');
    expect(await page.locator('pre.mermaid svg').count()).toBe(1);
    expect(await page.locator('#steps tr[data-step="manager"] .badge.s-waiting').count()).toBe(1);
    await page.screenshot({ path: `${ARTIFACTS}instance-page.png`, fullPage: true });

    await page.fill('form[data-action=decide] input[name=by]', 'ops-tester');
    const response = await submit('form[data-action=decide] button[value=approve]');
    expect(response.status()).toBe(303);
    expect(page.url()).toBe(`${base}/instances/inv-human-1`);
    expect(await page.locator('.flash.ok').textContent()).toContain(
      `approved manager: version ${before.version} → ${before.version + 1}`,
    );
    const after = (await store.load('inv-human-1'))!;
    expect(after.version).toBe(before.version + 1);
    expect(after.steps.manager?.output).toEqual({ decision: 'approve', by: 'ops-tester' });
    expect(after.tasks.pay?.queued).toBe(true); // handed off: no handler ran in the inspector
    expect(after.steps.pay?.output).toBeUndefined();

    // A worker's next poll takes the queued task.
    await worker.processDue();
    await worker.idle();
    const paid = (await store.load('inv-human-1'))!;
    expect(paid.steps.pay?.output).toEqual({ paid: 40 });
    expect(paid.active).toEqual(['receipt']);
  });

  it('requeues the dlq instance with a JSON patch the handler then sees', async () => {
    const before = (await store.load('inv-dlq-1'))!;
    expect(before.status).toBe('dlq');
    await page.goto(`${base}/instances/inv-dlq-1`);
    expect(await page.locator('#errors').textContent()).toContain('TOO_SMALL');
    await page.waitForSelector('body[data-diagram="rendered"]');
    await page.screenshot({ path: `${ARTIFACTS}instance-dlq-page.png`, fullPage: true });
    await page.selectOption('form[data-action=requeue] select[name=step]', 'run');
    await page.fill('form[data-action=requeue] textarea[name=patch]', '{ "size": 3, "note": "patched" }');
    const response = await submit('form[data-action=requeue] button');
    expect(response.status()).toBe(303);
    expect(await page.locator('.flash.ok').textContent()).toContain('requeued run with an input patch');
    const after = (await store.load('inv-dlq-1'))!;
    expect(after.version).toBe(before.version + 1);
    expect(after.input).toEqual({ size: 3, note: 'patched' });
    expect(after.tasks.run?.queued).toBe(true);

    seen.runJob.length = 0;
    await worker.processDue();
    await worker.idle();
    expect(seen.runJob).toEqual([{ size: 3 }]); // the step's input, mapped from the patched workflow input
    expect((await store.load('inv-dlq-1'))!.status).toBe('completed');
  });

  it('a post without the token gets 401 and changes nothing', async () => {
    const v = (await version('inv-dlq-2'))!;
    for (const headers of [{}, { Authorization: 'Bearer not-the-token' }] as Record<string, string>[]) {
      const r = await fetch(`${base}/instances/inv-dlq-2/abort`, {
        method: 'POST',
        headers,
        body: new URLSearchParams({ version: String(v), reason: 'no auth' }),
      });
      expect(r.status).toBe(401);
    }
    expect(await version('inv-dlq-2')).toBe(v);
    expect((await store.load('inv-dlq-2'))!.status).toBe('dlq');
  });

  it('a stale page gets the 409 conflict page and no write', async () => {
    await page.goto(`${base}/instances/inv-human-2`);
    const shown = Number(await page.locator('#version').textContent());
    await worker.signal('inv-human-2', 'receipt', { early: true }); // the instance moves on behind the page
    const response = await submit('form[data-action=cancel] button');
    expect(response.status()).toBe(409);
    expect(await page.locator('.flash.error').textContent()).toContain(
      `instance changed since you loaded this page (version ${shown} → ${shown + 1}); reload`,
    );
    const now = (await store.load('inv-human-2'))!;
    expect(now.version).toBe(shown + 1);
    expect(now.status).toBe('waiting');
  });

  it('hostile ids and payloads render as text; no script runs', async () => {
    await page.goto(`${base}/?prefix=hostile`);
    await Promise.all([page.waitForURL(/instances\/hostile/), page.click('#instances td.id a')]);
    expect(await page.locator('#instance-id').textContent()).toBe(HOSTILE_ID);
    await page.waitForSelector('body[data-diagram="rendered"]');
    const text = await page.locator('main').textContent();
    // Shown as the JSON it is stored as (quotes escaped), every character there as text.
    expect(text).toContain(JSON.stringify(HOSTILE.script));
    expect(text).toContain(JSON.stringify(HOSTILE.img));
    expect(await page.locator('img').count()).toBe(0);
    await page.goto(`${base}/instances/inv-dlq-2`);
    expect(await page.locator('#errors').textContent()).toContain(HOSTILE.img);
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.evaluate(() => (window as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(dialogs).toEqual([]);
    // No CSP violation or script error anywhere (the Mermaid bundle included).
    expect(pageErrors.filter((e) => !/status of 40[19]/.test(e))).toEqual([]);
  });
});
