import pg from 'pg';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './chromium.js';
import { type ExampleProcess, startExample } from './processes.js';

// The example as a user meets it: its server and its worker as two processes over PostgreSQL
// (the scripted model, offline), and the chat page in Chromium. The page is reloaded while the
// answer streams, and reads the turn again from the offset where it began; then a person approves
// the refund on the page, and the answer follows.

const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';
const schema = `stepfold_agent_test_${process.pid}`;
const OPENING = 'Let me look up order 7 first.';
const CLOSING = 'before any money moves.';
const ANSWER = 'Done: order 7 is refunded, and the money is on its way back.';

const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
const processes: ExampleProcess[] = [];
let base: string;
let browser: Awaited<ReturnType<typeof launchChromium>>;

/** The text of the page's latest answer (its text parts, not its tool cards). */
const answerText = (page: Page) =>
  page.evaluate(() =>
    Array.from(
      Array.from(document.querySelectorAll('.assistant')).at(-1)?.querySelectorAll('[data-text]') ?? [],
    )
      .map((s) => s.textContent)
      .join(''),
  );

beforeAll(async () => {
  await pool.query('SELECT 1').catch((e: unknown) => {
    throw new Error(`no PostgreSQL at ${PG_URL} (set STEPFOLD_PG_URL or run \`pnpm services\`)`, {
      cause: e,
    });
  });
  const env = { STEPFOLD_PG_URL: PG_URL, STEPFOLD_SCHEMA: schema, SCRIPTED_WORD_MS: '80' };
  const server = await startExample({ ...env, ROLE: 'server', PORT: '0' }, 'listening');
  processes.push(server);
  processes.push(await startExample({ ...env, ROLE: 'worker' }, 'working'));
  base = `http://127.0.0.1:${String(server.lines.find((l) => l['event'] === 'listening')?.['port'])}`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  for (const p of processes) await p.stop();
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
  await pool.end();
});

describe('the support agent example in Chromium', () => {
  it('resumes a streaming answer from its offset after a reload, then answers once the refund is approved', async () => {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const chat = `chat-${process.pid}`;
    await page.goto(`${base}/?chat=${chat}`);
    await page.waitForSelector('body[data-ready="true"]');

    const posted = page.waitForResponse(
      (r) => r.url().includes('/messages') && r.request().method() === 'POST',
    );
    await page.fill('#text', 'Refund order 7, please.');
    await page.click('#ask button');
    const { from } = (await (await posted).json()) as { from: number };

    // Mid-answer: a few words are on the page, not all of them.
    await page.waitForFunction(
      () =>
        (Array.from(document.querySelectorAll('.assistant')).at(-1)?.textContent ?? '').split(' ').length >=
        4,
    );
    const before = await answerText(page);
    expect(before.startsWith('Let me')).toBe(true);
    expect(before).not.toContain(CLOSING);

    const reads: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/stream?')) reads.push(new URL(r.url()).search);
    });
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    // The turn is read again from the offset where it began: the whole answer, each word once.
    await expect.poll(() => answerText(page), { timeout: 20_000 }).toContain(CLOSING);
    expect(reads).toEqual([`?from=${from}`]);
    const resumed = await answerText(page);
    expect(resumed.startsWith(OPENING)).toBe(true);
    expect(resumed.split(OPENING)).toHaveLength(2);
    expect(resumed.length).toBeGreaterThan(before.length);
    await expect.poll(() => page.locator('.assistant').last().textContent()).toContain('lookupOrder');

    // The refund waits for a person: approve it on the page, and the answer follows.
    await page.click('.tool button[data-decision="approve"]');
    await expect.poll(() => answerText(page), { timeout: 20_000 }).toContain(ANSWER);
    await expect.poll(() => page.textContent('#status')).toBe('');
    const refunds = await pool.query(`SELECT order_id, cents FROM "${schema}".refunds`);
    expect(refunds.rows).toEqual([{ order_id: '7', cents: 4200 }]);

    // Reloaded once more, the finished conversation is still there, and nothing is read again.
    reads.length = 0;
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    expect(await answerText(page)).toContain(ANSWER);
    expect(reads).toEqual([]);
    expect(errors).toEqual([]);
  });
});
