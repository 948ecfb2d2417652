import {
  createHarness,
  createMemoryStore,
  createRunner,
  isStepfoldError,
  PastPivotError,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// Once a pivot has completed there is no way back. `cancel` is refused with
// PAST_PIVOT and nothing is written; `abort` still works.

const expense = workflow('expense-pivot', 1)
  .task('reserve', { handler: 'reserveBudget', compensate: 'releaseBudget' })
  .task('pay', { handler: 'pay', pivot: true })
  .human('confirm', {})
  .build();

describe('cancel past a pivot', () => {
  it('before the pivot, cancel compensates; after it, cancel is refused and nothing changes', () => {
    const before = createHarness(expense).start(undefined);
    before.complete('reserve', { id: 'B-1' });
    expect(before.cancel()).toBe(true);
    expect(before.snapshot.steps.reserve!.status).toBe('compensating');

    const h = createHarness(expense).start(undefined);
    h.complete('reserve', { id: 'B-1' });
    h.complete('pay', { paid: true });
    const snapshot = h.snapshot;
    let refused: unknown;
    try {
      h.cancel('changed my mind');
    } catch (e) {
      refused = e;
    }
    expect(refused).toBeInstanceOf(PastPivotError);
    expect(isStepfoldError(refused, 'PAST_PIVOT')).toBe(true);
    expect((refused as PastPivotError).pivot).toBe('pay');
    expect((refused as PastPivotError).retryable).toBe(false);
    expect(h.snapshot).toBe(snapshot); // nothing written
    expect(h.snapshot.steps.reserve!.status).toBe('completed');
    // Abort still stops it, with no compensation.
    expect(h.abort('stop')).toBe(true);
    expect(h.status).toBe('aborted');
    expect(h.snapshot.steps.reserve!.status).toBe('completed');
  });

  it('through a runner and a store: cancel rejects with PAST_PIVOT, the stored version is unchanged', async () => {
    const store = createMemoryStore();
    const runner = createRunner({
      store,
      workflows: [expense],
      handlers: {
        reserveBudget: () => ({ id: 'B-1' }),
        releaseBudget: () => null,
        pay: () => ({ paid: true }),
      },
    });
    const s = await runner.start('expense-pivot', 'e-1', undefined);
    expect(s.steps.pay!.status).toBe('completed');
    const version = (await store.load('e-1'))!.version;
    await expect(runner.cancel('e-1', 'too late')).rejects.toMatchObject({ code: 'PAST_PIVOT' });
    expect((await store.load('e-1'))!.version).toBe(version);
    expect((await runner.abort('e-1', 'stop')).status).toBe('aborted');
  });
});
