import { createMemoryStore, makeTestSnapshot } from '@stepfold/engine';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createInspector } from '../src/index.js';

// The instance page shows the end of the instance's stream (a model's last tokens, a step's progress).

const TOKEN = 'stream-tail-token-0123';

describe('the instance page', () => {
  it('is a section of the instance page, absent for an instance that wrote none', async () => {
    const store = createMemoryStore();
    await store.create(makeTestSnapshot('talk-1', { status: 'running' }));
    await store.create(makeTestSnapshot('quiet-1', { status: 'running' }));
    const deltas = Array.from({ length: 80 }, (_, i) => ({ type: 'text-delta', delta: `w${i} ` }));
    await store.stream!.append('talk-1', 'model', 1, deltas);
    const app = new Hono();
    app.route('/ops', createInspector({ store, workflows: [], auth: { token: TOKEN } }));
    const page = async (id: string) =>
      (await app.request(`/ops/instances/${id}`, { headers: { Authorization: `Bearer ${TOKEN}` } })).text();
    const talk = await page('talk-1');
    expect(talk).toContain('<h2>Stream</h2>');
    expect(talk).toContain('Offsets 30–79 (the last 50 entries');
    expect(talk).toContain('w79 ');
    expect(talk).not.toContain('data-offset="29"');
    expect(await page('quiet-1')).not.toContain('<h2>Stream</h2>');
  });
});
