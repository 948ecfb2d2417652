import { createMemoryStore, createRunner, type Snapshot, step, workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { MAX_DATA_DEPTH } from '../src/events.js';

// Found by `pnpm fuzz` (events): data nested thousands of levels deep was applied by the reducer
// and then broke the store's JSON encoder with a RangeError (or, deeper still, the reducer's own
// freeze), an untyped error from runner.signal.

const wf = workflow('deep', 1).wait('w', { signal: 'go' }).build();

function nest(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

const started = () => step(wf, null, { type: 'start', at: 1, id: 'd-1', input: {} });

describe('deeply nested event data', () => {
  it('is INVALID_EVENT past MAX_DATA_DEPTH, and applies within it', () => {
    const s = started();
    expect(() =>
      step(wf, s, { type: 'signal', at: 2, name: 'go', payload: nest(MAX_DATA_DEPTH + 1) }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_EVENT' }));
    const ok = step(wf, s, { type: 'signal', at: 2, name: 'go', payload: nest(MAX_DATA_DEPTH) });
    expect(ok.status).toBe('completed');
    expect(JSON.parse(JSON.stringify(ok))).toMatchObject({ status: 'completed' });
  });

  it('a cyclic payload or start input is INVALID_EVENT', () => {
    const loop: Record<string, unknown> = {};
    loop['self'] = loop;
    expect(() => step(wf, started(), { type: 'signal', at: 2, name: 'go', payload: loop })).toThrow(
      expect.objectContaining({ code: 'INVALID_EVENT' }),
    );
    expect(() => step(wf, null, { type: 'start', at: 1, id: 'd-2', input: loop })).toThrow(
      expect.objectContaining({ code: 'INVALID_EVENT' }),
    );
  });

  it('runner.signal with a 50 000-level payload is refused typed, and nothing is written', async () => {
    const store = createMemoryStore();
    const runner = createRunner({ store, workflows: [wf], handlers: {} });
    await runner.start('deep', 'd-3', {});
    const before = JSON.stringify(await store.load('d-3'));
    await expect(runner.signal('d-3', 'go', nest(50_000))).rejects.toMatchObject({ code: 'INVALID_EVENT' });
    expect(JSON.stringify(await store.load('d-3'))).toBe(before);
  });

  it('a store refuses a snapshot JSON cannot hold as INVALID_SNAPSHOT', async () => {
    const store = createMemoryStore();
    const s = { ...started(), input: { n: 1n } } as unknown as Snapshot;
    await expect(store.create(s)).rejects.toMatchObject({ code: 'INVALID_SNAPSHOT' });
    expect(await store.load('d-1')).toBeNull();
  });
});
