import { makeTestSnapshot, type Snapshot } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { postgresDueBacklog } from '../src/index.js';
import { useTestTables } from './test-tables.js';

const { pool, store: freshStore } = useTestTables('b');

function due(id: string, wakeAt: number | null, workflow: string): Snapshot {
  return makeTestSnapshot(id, { workflow: { name: workflow, version: 1, hash: 'h' }, wakeAt });
}

describe('postgresDueBacklog', () => {
  it('counts per workflow the instances due and unclaimed at now, claims nothing, and stops at max', async () => {
    const store = await freshStore();
    for (let i = 0; i < 5; i++) await store.create(due(`a-${i}`, 1_000 + i, 'alpha'));
    await store.create(due('a-late', 9_000, 'alpha')); // due later
    await store.create(due('a-idle', null, 'alpha')); // due never
    for (let i = 0; i < 3; i++) await store.create(due(`b-${i}`, 1_000, 'beta'));
    const backlog = postgresDueBacklog({ pool, store });

    expect(await backlog({ now: 5_000, workflows: ['alpha', 'beta', 'gamma'] })).toEqual({
      alpha: 5,
      beta: 3,
      gamma: 0,
    });
    // Reading claimed nothing: a poll still finds all of alpha's due instances.
    const claimed = await store.listDue(5_000, 10, { workflow: 'alpha', leaseMs: 60_000 });
    expect(claimed).toHaveLength(5);
    // Claimed ones are not in the backlog until their claim lapses.
    expect((await backlog({ now: 5_000, workflows: ['alpha'] })).alpha).toBe(0);
    expect((await backlog({ now: 70_000, workflows: ['alpha'] })).alpha).toBe(6);

    const capped = postgresDueBacklog({ pool, store, max: 2 });
    expect(await capped({ now: 5_000, workflows: ['beta'] })).toEqual({ beta: 2 });
    expect(await backlog({ now: 5_000, workflows: [] })).toEqual({});
    expect(() => postgresDueBacklog({ pool, store, max: 0 })).toThrow(RangeError);
  });
});
