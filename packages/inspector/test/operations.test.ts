import { createMemoryStore, createRunner } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { indexDefinitions } from '../src/definitions.js';
import { createInspector } from '../src/index.js';
import { compactSchema, jsonSchemaOf } from '../src/payload-schema.js';
import { dispatch, pickupSchema } from './fixtures.js';
import { get, JAN_2025, post, setup, TOKEN, version, workflows } from './ops-setup.js';

// What a team runs operations from, through app.request over the memory store (1/2): list
// columns and the time filter, the declared signals and their schemas. operations-browser.test.ts
// drives the same in Chromium.

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
    expect(row('a-1')).toContain('<td class="id active-steps"><span>manager</span></td>');
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
