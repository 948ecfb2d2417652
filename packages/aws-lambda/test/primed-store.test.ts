import { createMemoryStore, createRunner, workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { primedStore } from '../src/primed-store.js';

const nap = workflow('nap', 1)
  .sleep('rest', { ms: 1000 })
  .task('wake', { handler: 'wake' })
  .human('confirm')
  .build();

describe('a store primed with a stream image', () => {
  it('answers the next load from the image, once, then reads the store again', async () => {
    const store = createMemoryStore();
    const writer = createRunner({ store, workflows: [nap], handlers: { wake: () => 'up' }, clock: () => 0 });
    const started = await writer.start('nap', 'n-1', {});
    const primed = primedStore(store);
    primed.prime({ ...started, input: 'from the image' });
    expect((await primed.store.load('n-1'))?.input).toBe('from the image');
    expect((await primed.store.load('n-1'))?.input).toEqual({});
  });

  it('a stale image costs a conflict and a real load, never a wrong write or a second run', async () => {
    const store = createMemoryStore();
    let runs = 0;
    const handlers = { wake: () => ++runs };
    const writer = createRunner({ store, workflows: [nap], handlers, clock: () => 0 });
    const stale = await writer.start('nap', 'n-2', {});
    // Another invocation ticks first: the sleep ends and `wake` runs.
    await writer.handle({ type: 'tick', id: 'n-2', now: 2000 });
    expect(runs).toBe(1);

    const primed = primedStore(store);
    const runner = createRunner({ store: primed.store, workflows: [nap], handlers, clock: () => 2000 });
    primed.prime(stale);
    const after = await runner.handle({ type: 'tick', id: 'n-2', now: 2000 });
    expect(runner.stats.conflicts).toBe(1);
    expect(runs).toBe(1);
    expect(after.snapshot.status).toBe('waiting');
    expect(after.snapshot.steps.wake?.output).toBe(1);
  });

  it('passes every other call and capability to the store it wraps', async () => {
    const store = createMemoryStore();
    const primed = primedStore(store);
    expect(primed.store.claims).toBe(store.claims);
    expect(await primed.store.load('none')).toBeNull();
  });
});
