import {
  composition,
  createHarness,
  createMemoryStore,
  createRunner,
  defineWorkflow,
  type Snapshot,
  type Store,
  TaskError,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// A map's rollback walks its completed items down by index, like the forward pass walks them up:
// its state stays O(`maxConcurrency`), so a map that fits the store's size limit on the way
// forward fits it on the way back.

const big = defineWorkflow({
  name: 'big-map',
  version: 1,
  start: 'each',
  steps: {
    each: {
      kind: 'map',
      items: 'input.xs',
      handler: 'work',
      compensate: 'unwork',
      maxConcurrency: 7,
      results: 'discard',
      retry: { maxAttempts: 1 },
    },
  },
});

const bytes = (s: Snapshot) => new TextEncoder().encode(JSON.stringify(s)).length;

/** A memory store of `max` bytes that records the largest snapshot written to it. */
function measuredStore(max: number) {
  const inner = createMemoryStore({ maxSnapshotBytes: max });
  const seen = { largest: 0 };
  const store: Store = {
    ...inner,
    maxSnapshotBytes: inner.maxSnapshotBytes,
    async create(s) {
      await inner.create(s);
      seen.largest = Math.max(seen.largest, bytes(s));
    },
    async save(s, expected, options) {
      await inner.save(s, expected, options);
      seen.largest = Math.max(seen.largest, bytes(s));
    },
  };
  return { store, seen };
}

describe('a failing discarded map of 1,000 items on a store of 8 KiB snapshots', () => {
  it('ends failed with every completed item compensated exactly once, its snapshots under the limit', async () => {
    const { store, seen } = measuredStore(8192);
    const done = new Map<number, number>();
    const undone = new Map<number, number>();
    const count = (m: Map<number, number>, i: number) => m.set(i, (m.get(i) ?? 0) + 1);
    let now = 1_000_000;
    const runner = createRunner({
      kinds: [composition],
      store,
      workflows: [big],
      clock: () => now,
      handlers: {
        work: async ({ input }) => {
          if (input === 999) throw new TaskError('item 999 is broken', { retryable: false });
          count(done, input as number);
          return null;
        },
        unwork: async ({ input }) => {
          count(undone, input as number);
        },
      },
    });
    const xs = Array.from({ length: 1000 }, (_, i) => i);
    await runner.start('big-map', 'big-1', { xs });
    await runner.idle();
    // Anything left (a lost write would leave tasks past their deadlines) is picked up when due.
    for (let i = 0; i < 5 && (await runner.get('big-1'))?.status !== 'failed'; i++) {
      now += 600_000;
      await runner.processDue(now);
      await runner.idle();
    }
    const s = (await runner.get('big-1'))!;
    expect(s.status).toBe('failed');
    expect(s.error).toMatchObject({ step: 'each', message: expect.stringContaining('item 999') });
    expect(s.steps['each']!.status).toBe('compensated');
    expect(done.size).toBe(999);
    expect([...undone.keys()].sort((a, b) => a - b)).toEqual(xs.slice(0, 999));
    expect([...undone.values()].every((n) => n === 1)).toBe(true);
    expect(seen.largest).toBeLessThanOrEqual(8192);
  });
});

describe('a map rolling back', () => {
  const small = defineWorkflow({ ...big, name: 'small-map' });

  /** Items 0..3 completed, item 4 failed for good: the rollback is undoing item 3. */
  function failedAtFour() {
    const h = createHarness(small, { kinds: [composition], id: 's-1' }).start({ xs: [0, 1, 2, 3, 4] });
    for (const item of [0, 1, 2, 3]) h.complete('each', null, { item });
    h.fail('each', { message: 'broken', retryable: false }, { item: 4 });
    return h;
  }

  /** Completes each item compensation in turn; the items in the order they were undone. */
  function undoAll(h: ReturnType<typeof failedAtFour>): number[] {
    const order: number[] = [];
    for (let t = h.dispatched('each')[0]; t?.phase === 'compensate'; t = h.dispatched('each')[0]) {
      order.push(t.item!);
      h.complete('each', undefined, { phase: 'compensate', item: t.item });
    }
    return order;
  }

  it('keeps only the item being undone in its state, walking the rest down by index', () => {
    const h = failedAtFour();
    expect(h.snapshot.steps['each']!.map).toMatchObject({ undo: [3], undoBelow: 3 });
    expect(undoAll(h)).toEqual([3, 2, 1, 0]);
    expect(h.status).toBe('failed');
  });

  it('from a snapshot that lists every item to undo (as before the walk) undoes each of them once', () => {
    const s = structuredClone(failedAtFour().snapshot);
    s.steps['each']!.map = { ...s.steps['each']!.map!, undo: [3, 2, 1, 0] };
    delete s.steps['each']!.map!.undoBelow;
    const h = createHarness(small, { kinds: [composition], from: s });
    expect(undoAll(h)).toEqual([3, 2, 1, 0]);
    expect(h.status).toBe('failed');
    expect(h.snapshot.steps['each']!.status).toBe('compensated');
  });
});
