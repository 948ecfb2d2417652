import { composition, createRunner, defineWorkflow, type Store, sweepRetention } from '@stepfold/engine';
import { expect } from 'vitest';

// Retention and a child workflow, on any store (the memory store's retention.test.ts and
// store-postgres's run it): a finished child stays while its parent runs, so that the parent's
// cancel can still revert it; once both are finished, both go.

const leaf = defineWorkflow({
  name: 'leaf',
  version: 1,
  start: 'work',
  steps: { work: { kind: 'task', handler: 'work', compensate: 'undoWork' } },
});
const held = defineWorkflow({
  name: 'held',
  version: 1,
  start: 'sub',
  steps: {
    sub: { kind: 'child', workflow: 'leaf', next: 'gate' },
    gate: { kind: 'wait', signal: 'go' },
  },
});

/** A parent held at a wait after its child completed: the sweep keeps the child until the parent is cancelled. */
export async function keepsAChildWhileItsParentRuns(store: Store): Promise<void> {
  const undone: string[] = [];
  const runner = createRunner({
    kinds: [composition],
    store,
    workflows: [leaf, held],
    handlers: {
      work: () => ({ done: true }),
      undoWork: ({ instanceId }) => {
        undone.push(instanceId);
      },
    },
  });
  const parent = await runner.start('held', 'p-1');
  expect(parent.status).toBe('waiting');
  const childId = parent.steps['sub']!.child!.id;
  expect((await store.load(childId))?.status).toBe('completed');

  const later = Date.now() + 60_000;
  const r = await sweepRetention({ store, olderThanMs: 0, now: later, action: 'delete' });
  expect(r).toMatchObject({ deleted: 0, keptChildren: 1 });
  expect((await store.load(childId))?.status).toBe('completed');

  const cancelled = await runner.cancel('p-1');
  expect(cancelled.status).toBe('cancelled');
  expect(undone).toEqual([childId]);
  expect((await store.load(childId))?.status).toBe('cancelled');

  // Both finished now: both go.
  const again = await sweepRetention({ store, olderThanMs: 0, now: later, action: 'delete' });
  expect(again).toMatchObject({ deleted: 2, keptChildren: 0 });
}
