import {
  createHarness,
  createMemoryStore,
  isStepfoldError,
  MAX_FAIR_KEY_LENGTH,
  type Snapshot,
  step,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { orderWorkflow } from './fixtures.js';

// `Snapshot.fairKey`: the fairness group the stores' due order rotates over. The reducer keeps it
// as it is through every event; stores and the reducer refuse one they cannot index.

function running(): Snapshot {
  return createHarness(orderWorkflow).start({ amount: 3 }).snapshot;
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return isStepfoldError(e) ? e.code : `untyped: ${String(e)}`;
  }
  return undefined;
}

describe('fairness key of a snapshot', () => {
  it('the reducer keeps it through events', () => {
    const done = { type: 'task.completed', at: 5, step: 'reserve', attempt: 1, output: 'ok' } as const;
    const s = { ...running(), fairKey: 'tenant-a' };
    const next = step(orderWorkflow, s, done);
    expect(next.steps['reserve']?.status).toBe('completed');
    expect(next.fairKey).toBe('tenant-a');
    expect(Object.hasOwn(step(orderWorkflow, running(), done), 'fairKey')).toBe(false);
  });

  it('one that is not a string of at most MAX_FAIR_KEY_LENGTH is INVALID_SNAPSHOT to the reducer', () => {
    const s = running();
    for (const fairKey of [7, null, 'x'.repeat(MAX_FAIR_KEY_LENGTH + 1)])
      expect(
        codeOf(() =>
          step(orderWorkflow, { ...s, fairKey } as unknown as Snapshot, { type: 'tick', at: 10 ** 9 }),
        ),
      ).toBe('INVALID_SNAPSHOT');
    expect(
      codeOf(() =>
        step(
          orderWorkflow,
          { ...s, fairKey: 'x'.repeat(MAX_FAIR_KEY_LENGTH) },
          { type: 'tick', at: 10 ** 9 },
        ),
      ),
    ).toBeUndefined();
  });

  it('a store refuses one it cannot index as INVALID_SNAPSHOT and writes nothing', async () => {
    const store = createMemoryStore();
    const s = running();
    for (const fairKey of [7, 'x'.repeat(MAX_FAIR_KEY_LENGTH + 1)])
      await expect(store.create({ ...s, fairKey } as unknown as Snapshot)).rejects.toMatchObject({
        code: 'INVALID_SNAPSHOT',
      });
    expect(await store.load(s.id)).toBeNull();
    await store.create({ ...s, fairKey: 'tenant-a' });
    expect((await store.load(s.id))?.fairKey).toBe('tenant-a');
  });
});
