import { createMemoryStore, definitionHash, type Store } from '@stepfold/engine';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import {
  childOf,
  parentAtChild,
  parentMidway,
  parentOrder,
  shipLine,
  snapshotOf,
} from '../../engine/test/child-fixtures.js';
import { lineItem, rollbackOrder, rolledBackOrder } from '../../engine/test/map-rollback-fixture.js';
import { ITEM_LINKS } from '../src/family.js';
import { createInspector } from '../src/index.js';

// The instance page's family over the memory store, in-process (app.request): a parent's children
// (child steps, a map's bar, counts and items, all linked) and a child's parent, walked both ways.
// The snapshots are hand-built in the shapes the child and map kinds write (engine/test/child-fixtures).

const TOKEN = 'family-token-0123456789';
const BEARER = { Authorization: `Bearer ${TOKEN}` };

/** o-1 midway through its map of 500 (items 0..59 dispatched, 12 never stored); o-2 at its child. */
async function seed(store: Store): Promise<void> {
  const parent = parentMidway('o-1');
  await store.create(parent);
  await store.create(childOf(parent, 'sub', 'completed'));
  for (let i = 0; i < 60; i++) {
    if (i === 12) continue;
    const status = [4, 17, 33].includes(i) ? 'failed' : i >= 40 ? 'waiting' : 'completed';
    await store.create(childOf(parent, 'lines', status, i));
  }
  const other = parentAtChild('o-2');
  await store.create(other);
  await store.create(childOf(other, 'sub', 'waiting'));
}

async function setup(workflows = [parentOrder, shipLine]) {
  const store = createMemoryStore();
  await seed(store);
  let loads = 0;
  const counted: Store = {
    ...store,
    load: (id) => {
      loads++;
      return store.load(id);
    },
  };
  const app = new Hono();
  app.route('/ops', createInspector({ store: counted, workflows, auth: { token: TOKEN } }));
  const page = async (id: string) => {
    const r = await app.request(`/ops/instances/${encodeURIComponent(id)}`, { headers: BEARER });
    expect(r.status, id).toBe(200);
    return r.text();
  };
  return { app, store, page, loads: () => loads };
}

/** The HTML of the element with this id, nested elements of the same tag included. */
function element(html: string, id: string, tag: string): string {
  const at = html.indexOf(`id="${id}"`);
  expect(at, `#${id}`).toBeGreaterThan(-1);
  const open = html.lastIndexOf(`<${tag}`, at);
  const tags = new RegExp(`<${tag}[\\s>]|</${tag}>`, 'g');
  tags.lastIndex = open;
  let depth = 0;
  for (let m = tags.exec(html); m; m = tags.exec(html)) {
    depth += m[0].startsWith('</') ? -1 : 1;
    if (depth === 0) return html.slice(open, m.index + m[0].length);
  }
  throw new Error(`#${id} is not closed`);
}

const href = (id: string) => `href="/ops/instances/${encodeURIComponent(id)}"`;

describe('the instance page: children', () => {
  it("a parent: the child step's child linked with its status, the map's bar, counts and items", async () => {
    const { page } = await setup();
    const html = await page('o-1');
    const steps = element(html, 'child-steps', 'table');
    expect(steps).toContain(href('o-1/1/sub/1'));
    expect(steps).toMatch(/o-1\/1\/sub\/1<\/a> <span class="badge s-completed">completed<\/span>/);

    const map = element(html, 'map-lines', 'div');
    expect(map).toContain('map of <code>ship-line</code>');
    expect(map).toMatch(
      /<span class="s-done" style="width:7.40%"><\/span><span class="s-failed" style="width:0.60%"><\/span><span class="s-running" style="width:4.00%"><\/span>/,
    );
    expect(map).toContain('aria-label="37 of 500 done, 3 failed, 20 running, 440 not started"');
    expect(map).toContain('<p class="counts">37/500 done · 3 failed · 20 running · 440 not started</p>');
    for (const i of [4, 17, 33]) {
      expect(map).toContain(
        `<a ${href(`o-1/1/lines/1/${i}`)} title="o-1/1/lines/1/${i}">${i}</a> <span class="badge s-failed">failed</span>`,
      );
    }
    const running = map.slice(map.indexOf('data-items="Running"'));
    expect(running.match(/s-waiting/g)).toHaveLength(20);
    expect(map).toContain(
      `href="/ops/?prefix=${encodeURIComponent('o-1/1/lines/1/')}">All 60 children started so far`,
    );
    // The diagram and the overview say the same from the same state.
    expect(html).toContain('&lt;br/&gt;37/500 done · 3 failed · 20 running&quot;]]');
    expect(html).toContain('items: 37/500 done · 3 failed · 20 running');
  });

  it("a child step's node and label take the child's status while it runs: waiting", async () => {
    const { page } = await setup();
    const html = await page('o-2');
    expect(element(html, 'child-steps', 'table')).toContain('<span class="badge s-waiting">waiting</span>');
    expect(html).toContain('→ o-2/1/sub/1 · waiting');
    expect(html).toMatch(/class s_sub waiting/);
    expect(element(html, 'step-strip', 'ol')).toContain('data-step="sub" data-state="waiting"');
    expect(html).toContain('child o-2/1/sub/1 waiting');
  });

  it('a big map loads a bounded number of children per page view, and lists the rest as a count', async () => {
    const { store, page, loads } = await setup();
    const s = (await store.load('o-1'))!;
    const failed = Array.from({ length: 45 }, (_, i) => i);
    s.steps['lines']!.map = { total: 100_000, next: 1000, running: [], failed, ok: 955 };
    await store.save({ ...s, version: s.version + 1 }, s.version);
    const before = loads();
    const html = await page('o-1');
    // The instance itself, the child step's child and at most ITEM_LINKS items.
    expect(loads() - before).toBeLessThanOrEqual(2 + ITEM_LINKS);
    const map = element(html, 'map-lines', 'div');
    expect(map).toContain(`<span class="muted">and ${45 - ITEM_LINKS} more</span>`);
    expect(map).toContain('<p class="counts">955/100000 done · 45 failed · 99000 not started</p>');
  });

  it('without the definitions: the map is found to run workflows by its first child, and still listed', async () => {
    const { store, page } = await setup([]);
    const s = (await store.load('o-1'))!;
    s.tasks = {};
    await store.save({ ...s, version: s.version + 1 }, s.version);
    const map = element(await page('o-1'), 'map-lines', 'div');
    expect(map).toContain('map of child workflows');
    expect(map).toContain(href('o-1/1/lines/1/4'));
  });
});

describe('the instance page: a map that rolled back', () => {
  it('counts the completed items the rollback undid, in the words and in the bar', async () => {
    const store = createMemoryStore();
    for (const snapshot of await rolledBackOrder('r-1')) await store.create(snapshot);
    const app = new Hono();
    app.route(
      '/ops',
      createInspector({ store, workflows: [rollbackOrder, lineItem], auth: { token: TOKEN } }),
    );
    const html = await (await app.request('/ops/instances/r-1', { headers: BEARER })).text();
    const block = element(html, 'map-lines', 'div');
    expect(block).toContain('<p class="counts">2/3 done · 1 failed · 2 undone</p>');
    expect(block).toContain('aria-label="2 of 3 done (2 undone), 1 failed, 0 running, 0 not started"');
    // The undone items leave the bar's done part for a part of their own.
    expect(block).toContain('<span class="s-done" style="width:0.00%"></span>');
    expect(block).toContain('<span class="s-compensated" style="width:66.67%"></span>');
    // The diagram's source, drawn on the page, says it too.
    expect(element(html, 'diagram', 'pre')).toContain('2/3 done · 1 failed · 2 undone');
  });
});

describe('the instance page: parent', () => {
  it('a child links to its parent, and the parent back to it: one can walk both ways', async () => {
    const { page } = await setup();
    const child = await page('o-1/1/lines/1/4');
    const parent = element(child, 'parent', 'p');
    expect(parent).toContain(
      `Child of <a class="id" ${href('o-1')}>o-1</a> <span class="badge s-running">running</span>`,
    );
    expect(parent).toContain('started by step <code>lines</code>, item 4');
    expect(element(child, 'facts', 'dl')).toContain(
      `<dt>parent</dt><dd><a ${href('o-1')}>o-1</a> step lines, item 4</dd>`,
    );
    expect(child).not.toContain('id="children"');
    // Back from the parent's page to the child's, by the link the page shows.
    const back = await page('o-1');
    expect(back).toContain(href('o-1/1/lines/1/4'));
  });

  it("the map's children link opens the list filtered to them", async () => {
    const { app } = await setup();
    const r = await app.request(`/ops/?prefix=${encodeURIComponent('o-1/1/lines/1/')}`, { headers: BEARER });
    const html = await r.text();
    expect(html).toContain(href('o-1/1/lines/1/0'));
    expect(html).not.toContain(href('o-1/1/sub/1'));
  });

  it('stays behind auth: no family page without a credential', async () => {
    const { app } = await setup();
    const r = await app.request(`/ops/instances/${encodeURIComponent('o-1/1/lines/1/4')}`);
    expect(r.status).toBe(401);
    expect(await r.text()).not.toContain('Child of');
  });
});

describe('the instance list: top-level only', () => {
  const rows = (html: string) => [...html.matchAll(/<tr data-id="([^"]+)"/g)].map((m) => m[1]);

  it('leaves out the children of child and map steps (instances with a parent)', async () => {
    const { app } = await setup();
    const all = await (await app.request('/ops/', { headers: BEARER })).text();
    expect(rows(all)).toContain('o-1/1/lines/1/0'); // flooded: the map's items come first
    expect(all).toContain('<input type="checkbox" name="top" value="1"> Top-level only');
    const top = await (await app.request('/ops/?top=1', { headers: BEARER })).text();
    expect(rows(top)).toEqual(['o-1', 'o-2']);
    expect(top).toContain('<input type="checkbox" name="top" value="1" checked> Top-level only');
    const combined = await (await app.request('/ops/?top=1&prefix=o-2', { headers: BEARER })).text();
    expect(rows(combined)).toEqual(['o-2']);
  });

  it('reads a bounded number of rows per page, then says so and links on with the filter kept', async () => {
    const store = createMemoryStore();
    await seed(store);
    const app = new Hono();
    app.route(
      '/ops',
      createInspector({ store, workflows: [parentOrder, shipLine], auth: { token: TOKEN }, pageSize: 1 }),
    );
    const read = async (query: string) => {
      const html = await (await app.request(`/ops/${query}`, { headers: BEARER })).text();
      const next = /rel="next" href="\/ops\/([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&');
      return { ids: rows(html), next, html };
    };
    const first = await read('?top=1');
    expect(first.ids).toEqual(['o-1']);
    expect(first.next).toContain('top=1');
    // o-1's 60 children come next in id order: 20 rows read (one page of 1, times 20), none top-level.
    const second = await read(first.next!);
    expect(second.ids).toEqual([]);
    expect(second.html).toContain('id="scan-note"');
    expect(second.html).toContain('Read 20 instances');
    let page = second;
    for (let i = 0; i < 5 && page.ids.length === 0; i++) page = await read(page.next!);
    expect(page.ids).toEqual(['o-2']);
  });
});

describe('actions with child and map steps among the definitions', () => {
  it('the inspector enables the composition kinds itself: a cancel writes (no KIND_NOT_LOADED)', async () => {
    // This file never imports @stepfold/engine: only the inspector's own import enables it.
    const { app, store } = await setup();
    await store.create(
      snapshotOf(shipLine, 'g-1', {
        workflow: { name: 'ship-line', version: 1, hash: definitionHash(shipLine) },
        steps: { pick: { status: 'active', iteration: 1, attempt: 0, startedAt: 0 } },
        active: ['pick'],
      }),
    );
    const version = String((await store.load('g-1'))!.version);
    const r = await app.request('/ops/instances/g-1/cancel', {
      method: 'POST',
      headers: BEARER,
      body: new URLSearchParams({ version }),
    });
    expect(r.status).toBe(303);
    expect((await store.load('g-1'))!.status).toBe('cancelled');
  });
});
