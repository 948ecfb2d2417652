import {
  createMemoryPayloadStore,
  createMemoryStore,
  createRunner,
  isPayloadRef,
  offloading,
  type PayloadRef,
  type PayloadStore,
  workflow,
} from '@stepfold/engine';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createInspector, type InspectorAuth } from '../src/index.js';
import { SHOWN_CHARS } from '../src/views/payloads.js';
import { HOSTILE } from './fixtures.js';

// Offloaded values in the inspector, in-process over the memory stores: the instance page shows
// references as blocks, the payload route fetches a value only for a logged-in caller and only
// when the instance refers to it.

const TOKEN = 'test-token-0123456789';
const BEARER = { Authorization: `Bearer ${TOKEN}` };

const report = workflow('report', 1)
  .task('fetch', { handler: 'fetchRows', offload: { keep: ['status'] } })
  .build();

const rowsOf = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: i, note: `${HOSTILE.script} ${i}` }));

async function setup(options: { auth?: InspectorAuth; payloads?: boolean } = {}) {
  const store = createMemoryStore();
  const inner = createMemoryPayloadStore();
  const fetched: string[] = [];
  // Counts the bodies read, so a test can tell that a refused request fetched nothing.
  const payloadStore: PayloadStore = Object.assign(Object.create(inner) as PayloadStore, {
    get: (owner: string, sha: string) => {
      fetched.push(sha);
      return inner.get(owner, sha);
    },
  });
  let size = 50;
  const runner = createRunner({
    store,
    workflows: [report],
    payloads: offloading({ store: inner, threshold: 1024 }),
    handlers: { fetchRows: () => ({ status: 'ok', rows: rowsOf(size) }) },
  });
  await runner.start('report', 'r-1');
  size = 8000; // about 470 kB of JSON, more than a value page shows
  await runner.start('report', 'r-big');
  await runner.start('report', 'r-gone');
  await inner.deleteOwner('r-gone');
  const app = new Hono();
  app.route(
    '/ops',
    createInspector({
      store,
      workflows: [report],
      auth: options.auth ?? { token: TOKEN },
      ...(options.payloads === false ? {} : { payloads: payloadStore }),
    }),
  );
  const refOf = async (id: string) => (await store.load(id))!.steps['fetch']!.output as PayloadRef;
  return { app, store, fetched, refOf };
}

const valuePath = (id: string, sha: string) => `/ops/instances/${id}/payloads/${sha}`;

describe('payload references on the instance page', () => {
  it('shows each reference as a block with its size, hash prefix, kept fields and a link; no body is read', async () => {
    const { app, fetched, refOf } = await setup();
    const ref = await refOf('r-1');
    expect(isPayloadRef(ref)).toBe(true);
    const page = await (await app.request('/ops/instances/r-1', { headers: BEARER })).text();
    expect(page).toContain(`data-sha="${ref.sha256}"`);
    expect(page).toContain(`sha <code title="${ref.sha256}">${ref.sha256.slice(0, 12)}…</code>`);
    expect(page).toContain(`${(ref.bytes / 1000).toFixed(1)} kB`);
    expect(page).toContain('kept: <code>{&quot;status&quot;:&quot;ok&quot;}</code>');
    expect(page).toContain(`<a class="show-payload" href="${valuePath('r-1', ref.sha256)}">show value</a>`);
    expect(page).not.toContain('row');
    expect(fetched).toEqual([]);
  });

  it('without a payload store the block says payloads are not configured, and the route is a 404', async () => {
    const { app, refOf } = await setup({ payloads: false });
    const page = await (await app.request('/ops/instances/r-1', { headers: BEARER })).text();
    expect(page).toContain('payloads are not configured in this inspector');
    expect(page).not.toContain('show value');
    const res = await app.request(valuePath('r-1', (await refOf('r-1')).sha256), { headers: BEARER });
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('Payloads are not configured');
  });
});

describe('the payload route', () => {
  it('refuses without a credential (401) or when authorize says no (403), and fetches nothing', async () => {
    const { app, fetched, refOf } = await setup();
    const path = valuePath('r-1', (await refOf('r-1')).sha256);
    expect((await app.request(path)).status).toBe(401);
    expect((await app.request(path, { headers: { Authorization: 'Bearer wrong-token-000' } })).status).toBe(
      401,
    );
    const denied = await setup({ auth: { authorize: () => false } });
    expect((await denied.app.request(path)).status).toBe(403);
    expect([...fetched, ...denied.fetched]).toEqual([]);
  });

  it('shows the value as escaped pretty JSON', async () => {
    const { app, refOf } = await setup();
    const res = await app.request(valuePath('r-1', (await refOf('r-1')).sha256), { headers: BEARER });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('<pre class="json" id="payload-value">{\n  &quot;status&quot;: &quot;ok&quot;,');
    expect(text).toContain('&lt;script&gt;window.__pwned');
    expect(text).not.toContain(HOSTILE.script);
    expect(text).not.toContain('id="truncated"');
  });

  it('cuts a very large value with a notice, and downloads it whole', async () => {
    const { app, refOf } = await setup();
    const ref = await refOf('r-big');
    const page = await (await app.request(valuePath('r-big', ref.sha256), { headers: BEARER })).text();
    expect(page).toContain('id="truncated"');
    expect(page).toContain(`href="${valuePath('r-big', ref.sha256)}?download=1"`);
    const shown = /<pre class="json" id="payload-value">([\s\S]*?)<\/pre>/.exec(page)![1]!;
    expect(shown).toContain('&quot;id&quot;: 0,');
    expect(shown).not.toContain('&quot;id&quot;: 7999,'); // the last row is past the cut
    expect(shown.endsWith('\n…')).toBe(true);
    expect(JSON.stringify({ status: 'ok', rows: rowsOf(8000) }, null, 2).length).toBeGreaterThan(SHOWN_CHARS);
    const download = await app.request(`${valuePath('r-big', ref.sha256)}?download=1`, { headers: BEARER });
    expect(download.headers.get('content-disposition')).toMatch(
      /^attachment; filename="payload-[0-9a-f]{16}\.json"$/,
    );
    expect(JSON.parse(await download.text())).toEqual({ status: 'ok', rows: rowsOf(8000) });
  });

  it('reads only payloads the instance refers to (404 otherwise, nothing fetched)', async () => {
    const { app, fetched, refOf } = await setup();
    const other = (await refOf('r-big')).sha256;
    expect((await app.request(valuePath('r-1', other), { headers: BEARER })).status).toBe(404);
    expect((await app.request(valuePath('nope', other), { headers: BEARER })).status).toBe(404);
    expect((await app.request(valuePath('r-1', 'not-a-hash'), { headers: BEARER })).status).toBe(404);
    expect(fetched).toEqual([]);
  });

  it('a missing body is a PAYLOAD_NOT_FOUND page with status 404', async () => {
    const { app, refOf } = await setup();
    const res = await app.request(valuePath('r-gone', (await refOf('r-gone')).sha256), { headers: BEARER });
    expect(res.status).toBe(404);
    const text = await res.text();
    expect(text).toContain('PAYLOAD_NOT_FOUND');
    expect(text).toContain('is not in the payload store');
  });
});
