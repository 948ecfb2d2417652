import {
  aesGcmCodec,
  createMemoryPayloadStore,
  createMemoryStore,
  createRunner,
  offloading,
  type PayloadRef,
  workflow,
} from '@stepfold/engine';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createInspector } from '../src/index.js';
import { BEARER, get, post, TOKEN, version } from './ops-setup.js';

// An inspector over a store a runner with a codec wrote: with the codec it shows the data (and
// offloaded values) and acts; without it, markers, and actions on an encrypted instance refused.

const claim = workflow('claim', 1)
  .task('fetch', { handler: 'fetch' })
  .wait('receipt', { signal: 'receipt' })
  .build();

async function setup() {
  const store = createMemoryStore();
  const payloads = createMemoryPayloadStore();
  const codec = aesGcmCodec({ keys: { k2: crypto.getRandomValues(new Uint8Array(32)) } });
  const runner = createRunner({
    store,
    workflows: [claim],
    codec,
    payloads: offloading({ store: payloads, threshold: 1024 }),
    handlers: { fetch: () => ({ rows: 'MARK-row '.repeat(300) }) },
  });
  await runner.start('claim', 'c-1', { patient: 'MARK-patient' });
  const mount = (withCodec: boolean) => {
    const app = new Hono();
    app.route(
      '/ops',
      createInspector({
        store,
        workflows: [claim],
        auth: { token: TOKEN },
        payloads,
        ...(withCodec ? { codec } : {}),
      }),
    );
    return app;
  };
  return { store, codec, keyed: mount(true), keyless: mount(false) };
}

describe('the inspector on encrypted instances', () => {
  it('with the codec shows the data and offloaded values; without it, markers and no data', async () => {
    const { store, codec, keyed, keyless } = await setup();
    const page = await get(keyed, '/instances/c-1');
    expect(page).toContain('MARK-patient');
    const bare = await get(keyless, '/instances/c-1');
    expect(bare).toContain('[encrypted k2]');
    expect(bare).not.toContain('MARK');
    // The offloaded value: its reference is inside the encrypted output, its body encrypted too.
    const ref = (await codec.wrap(store).load('c-1'))?.steps['fetch']?.output as PayloadRef;
    const value = await keyed.request(`/ops/instances/c-1/payloads/${ref.sha256}`, { headers: BEARER });
    expect(value.status).toBe(200);
    expect(await value.text()).toContain('MARK-row');
    const hidden = await keyless.request(`/ops/instances/c-1/payloads/${ref.sha256}`, { headers: BEARER });
    expect(hidden.status).toBe(404);
    expect(await hidden.text()).not.toContain('MARK');
  });

  it('without the codec an action on an encrypted instance is refused and nothing is written; with it, applied', async () => {
    const { store, keyed, keyless } = await setup();
    const v = await version(store, 'c-1');
    const refused = await post(keyless, '/instances/c-1/cancel', { version: v, reason: 'test' });
    expect(refused.status).toBe(500);
    expect(await refused.text()).toContain('encrypted');
    expect(await version(store, 'c-1')).toBe(v);
    const done = await post(keyed, '/instances/c-1/cancel', { version: v, reason: 'test' });
    expect(done.status).toBe(303);
    expect((await store.load('c-1'))?.status).toBe('cancelled');
  });
});
