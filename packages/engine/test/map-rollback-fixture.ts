import { composition, createHarness, defineWorkflow, type Snapshot, TaskError } from '@stepfold/engine';

// A map that failed and rolled back, run by the harness so the snapshots are the ones the reducer
// writes: three line items, the third fails for good, the map fails and the rollback reverts the
// two that completed. The diagram, the CLI and the inspector render it (each says "2 undone").

/** One line item, picked and unpicked. */
export const lineItem = defineWorkflow({
  name: 'line-item',
  version: 1,
  start: 'pick',
  steps: { pick: { kind: 'task', handler: 'pick', compensate: 'unpick' } },
});

/** A map of three line items. */
export const rollbackOrder = defineWorkflow({
  name: 'rollback-order',
  version: 1,
  start: 'lines',
  steps: { lines: { kind: 'map', items: 'input.lines', workflow: 'line-item', maxConcurrency: 3 } },
});

/** The rolled-back order `id` and its three children, parent first. */
export async function rolledBackOrder(id = 'r-1'): Promise<Snapshot[]> {
  const h = createHarness(rollbackOrder, { kinds: [composition], workflows: [lineItem], id }).start({
    lines: ['a', 'b', 'c'],
  });
  await h.run(
    {
      pick: ({ input }) => {
        if (input === 'c') throw new TaskError('none left', { retryable: false });
        return { picked: input };
      },
      unpick: () => null,
    },
    { timers: 'advance' },
  );
  return h.tree.map((x) => x.snapshot);
}
