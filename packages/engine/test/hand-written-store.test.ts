import { createMemoryStore, createRunner, type Snapshot, type Store, workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// `Store` is public and may be written by hand (the Cloudflare example's Durable Object store is):
// what such a store hands back is upgraded and checked where it enters the runner, as a kit-built
// adapter's load does, so a bad row is refused with INVALID_SNAPSHOT and nothing is written.

const order = workflow('order', 1).wait('paid', { signal: 'paid' }).build();

/** A store whose `load` hands back `tamper(snapshot)` once `on.tamper` is set; the rest as the memory store does. */
function handWritten(tamper: (s: Snapshot) => unknown) {
  const inner = createMemoryStore();
  const on = { tamper: false };
  const store = new Proxy(inner, {
    get(target, key, receiver) {
      if (key !== 'load') return Reflect.get(target, key, receiver);
      return async (id: string) => {
        const s = await target.load(id);
        return s && on.tamper ? (tamper(structuredClone(s)) as Snapshot) : s;
      };
    },
  });
  return { store: store as Store, inner, on };
}

async function refusal(tamper: (s: Snapshot) => unknown) {
  const { store, inner, on } = handWritten(tamper);
  const runner = createRunner({ store, workflows: [order], handlers: {} });
  await runner.start('order', 'o-1');
  on.tamper = true;
  const error = await runner.signal('o-1', 'paid', {}).catch((e: unknown) => e);
  return { error, stored: await inner.load('o-1') };
}

describe('a hand-written store, as the runner loads from it', () => {
  it('a snapshot of a format newer than the engine is refused, nothing written', async () => {
    const { error, stored } = await refusal((s) => ({ ...s, schemaVersion: 99 }));
    expect(error).toMatchObject({ code: 'INVALID_SNAPSHOT', issues: [{ path: 'schemaVersion' }] });
    expect(stored?.version).toBe(1);
    expect(stored?.status).toBe('waiting');
  });

  it('a snapshot of another instance than the one asked for is refused', async () => {
    const { error, stored } = await refusal((s) => ({ ...s, id: 'someone-else' }));
    expect(error).toMatchObject({ code: 'INVALID_SNAPSHOT', issues: [{ path: 'id' }] });
    expect(stored?.version).toBe(1);
  });

  it('a snapshot without its workflow envelope is refused', async () => {
    const { error } = await refusal((s) => ({ ...s, workflow: null }));
    expect(error).toMatchObject({ code: 'INVALID_SNAPSHOT', issues: [{ path: 'workflow' }] });
  });

  it('a well-formed snapshot goes through unchanged', async () => {
    const { store, on } = handWritten((s) => s);
    const runner = createRunner({ store, workflows: [order], handlers: {} });
    await runner.start('order', 'o-1');
    on.tamper = true;
    expect((await runner.signal('o-1', 'paid', { ok: true })).status).toBe('completed');
  });
});
