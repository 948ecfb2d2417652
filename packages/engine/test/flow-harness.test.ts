import { composition, createHarness, flowControl, workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// The harness counts flow limits in memory, as a store's `flow` would: a limited definition runs
// in it unchanged, and a throttled attempt shows in its snapshot.

const fan = workflow('fan', 1)
  .input<{ jobs: Array<{ tenant: string }> }>()
  .map('each', { items: 'input.jobs', handler: 'work', concurrency: { key: 'item.tenant', limit: 1 } })
  .build();

describe('harness with flow limits', () => {
  it('items over their key limit wait, visibly, and run as slots free', () => {
    const h = createHarness(fan, { kinds: [composition, flowControl] }).start({
      jobs: [{ tenant: 'a' }, { tenant: 'a' }, { tenant: 'b' }],
    });
    expect(h.dispatched().map((t) => t.item)).toEqual([0, 2]);
    expect(h.snapshot.steps.each?.throttled).toMatchObject({
      need: { scope: 'fan/each', key: 'a', limit: 1 },
      item: 1,
      attempt: 1,
    });
    h.complete('each', 'ok' as never, { item: 0 });
    // The freed slot ticked the instance: item 1 runs now, the same attempt.
    expect(h.dispatched().map((t) => [t.item, t.attempt])).toEqual([
      [2, 1],
      [1, 1],
    ]);
    expect(h.snapshot.steps.each?.throttled).toBeUndefined();
    h.complete('each', 'ok' as never, { item: 1 });
    h.complete('each', 'ok' as never, { item: 2 });
    expect(h.status).toBe('completed');
    expect(h.replayed()).toEqual(h.snapshot);
  });

  it('runs a limited definition to its end with real handlers', async () => {
    const h = createHarness(fan, { kinds: [composition, flowControl] }).start({
      jobs: [{ tenant: 'a' }, { tenant: 'a' }, { tenant: 'a' }],
    });
    await h.run(
      { work: async ({ input }: { input: { tenant: string } }) => input.tenant },
      { timers: 'advance' },
    );
    expect(h.status).toBe('completed');
    expect(h.output('each')).toEqual(['a', 'a', 'a']);
  });

  it('instance limits admit a harness instance at once when its key is free', () => {
    const one = workflow('one', 1, { concurrency: { key: 'input.tenant', limit: 1 } })
      .input<{ tenant: string }>()
      .task('t', { handler: 't' })
      .build();
    const h = createHarness(one, { kinds: [flowControl] }).start({ tenant: 'x' });
    expect(h.snapshot.holds).toEqual([{ scope: 'one', key: 'x', limit: 1 }]);
    expect(h.dispatched().map((t) => t.step)).toEqual(['t']);
    h.complete('t', undefined as never);
    expect(h.status).toBe('completed');
  });
});
