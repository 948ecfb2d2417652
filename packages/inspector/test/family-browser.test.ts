import { createMemoryStore } from '@stepfold/engine';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  childOf,
  parentAtChild,
  parentMidway,
  parentOrder,
  shipLine,
} from '../../engine/test/child-fixtures.js';
import { ARTIFACTS, type InspectorPage, openInspector } from './inspector-page.js';

// The family views in Chromium over the memory store: the parent's diagram (with its live lines)
// draws, the map's bar has its widths, and the links walk from the parent to a child and back.
// The snapshots are hand-built in the shapes the child and map kinds write. Screenshots land in
// test/artifacts/ (git-ignored).

const TOKEN = 'family-browser-token-51d2';

describe('children and parent in Chromium', () => {
  const pageErrors: string[] = [];
  let ui: InspectorPage | undefined;
  let base: string;
  let page: Page;

  beforeAll(async () => {
    const store = createMemoryStore();
    const parent = parentMidway('o-1');
    await store.create(parent);
    await store.create(childOf(parent, 'sub', 'completed'));
    for (let i = 0; i < 60; i++) {
      const status = [4, 17, 33].includes(i) ? 'failed' : i >= 40 ? 'waiting' : 'completed';
      await store.create(childOf(parent, 'lines', status, i));
    }
    const other = parentAtChild('o-2');
    await store.create(other);
    await store.create(childOf(other, 'sub', 'waiting'));
    ui = await openInspector(
      { store, workflows: [parentOrder, shipLine], auth: { token: TOKEN } },
      pageErrors,
      { bearer: TOKEN },
    );
    ({ base, page } = ui);
  });

  afterAll(() => ui?.close());

  const open = async (id: string) => {
    await page.goto(`${base}/instances/${encodeURIComponent(id)}`);
    await page.waitForFunction(() => document.body.dataset.diagram !== undefined);
  };

  it("draws the parent's diagram with the map's counts and the child's id, and the map's bar", async () => {
    await open('o-1');
    expect(await page.evaluate(() => document.body.dataset.diagram)).toBe('rendered');
    const nodes = await page.locator('#diagram-box g.node').allTextContents();
    expect(nodes.some((t) => t.includes('37/500 done · 3 failed · 20 running'))).toBe(true);
    expect(nodes.some((t) => t.includes('→ o-1/1/sub/1'))).toBe(true);
    const bar = (await page.locator('#map-lines .bar').boundingBox())!;
    const done = (await page.locator('#map-lines .bar .s-done').boundingBox())!;
    const running = (await page.locator('#map-lines .bar .s-running').boundingBox())!;
    expect(done.width / bar.width).toBeCloseTo(0.074, 1);
    expect(running.width / bar.width).toBeCloseTo(0.04, 1);
    await page.screenshot({ path: `${ARTIFACTS}family-parent.png`, fullPage: true });
    await page.locator('#children').screenshot({ path: `${ARTIFACTS}family-children.png` });
    expect(pageErrors).toEqual([]);
  });

  it('walks from the parent to a failed item and back, and to the child step and back', async () => {
    await open('o-1');
    await Promise.all([
      page.waitForURL(/instances\/o-1%2F1%2Flines%2F1%2F17$/),
      page.click('#map-lines [data-items=Failed] a >> text="17"'),
    ]);
    expect(await page.locator('#instance-id').textContent()).toBe('o-1/1/lines/1/17');
    expect(await page.locator('#parent').textContent()).toContain('started by step lines, item 17');
    await Promise.all([page.waitForURL(/instances\/o-1$/), page.click('#parent a')]);
    await Promise.all([page.waitForURL(/o-1%2F1%2Fsub%2F1$/), page.click('#child-steps a')]);
    expect(await page.locator('#parent').textContent()).toContain('started by step sub');
    expect(pageErrors).toEqual([]);
  });

  it('a child step waiting on its waiting child is drawn waiting', async () => {
    await open('o-2');
    const fill = await page
      .locator('#diagram-box g.node.waiting')
      .first()
      .evaluate((n) => n.textContent ?? '');
    expect(fill).toContain('o-2/1/sub/1 · waiting');
    await page.screenshot({ path: `${ARTIFACTS}family-child-waiting.png`, fullPage: true });
    expect(pageErrors).toEqual([]);
  });

  it('the list ticked "Top-level only" shows the parents, not the map\'s children', async () => {
    await page.goto(`${base}/`);
    expect(await page.locator('#instances tbody tr').count()).toBe(50); // a page of o-1 and its children
    await page.check('form.filters input[name=top]');
    await Promise.all([page.waitForURL(/top=1/), page.click('form.filters button[type=submit]')]);
    const ids = await page
      .locator('#instances tbody tr')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')));
    expect(ids).toEqual(['o-1', 'o-2']);
    expect(await page.isChecked('form.filters input[name=top]')).toBe(true);
    expect(pageErrors).toEqual([]);
  });
});
