import {
  createMemoryStore,
  createRunner,
  eventTriggers,
  type PublishResult,
  workflow,
} from '@stepfold/engine';
import { describe, expectTypeOf, it } from 'vitest';

// Type-level promises of triggers, checked by tsc (`pnpm typecheck`): a filter reads the event's
// data as `input`, so its paths are the declared input's.

const base = workflow('w', 1).input<{ total: number; customer: { tier: string } }>();

describe('triggers in the typed builder', () => {
  it('takes filters over the declared input paths', () => {
    base.on('order.placed', { filter: { '>=': [{ var: 'input.total' }, 100] } });
    base.on('order.placed', { filter: { and: [{ exists: 'input.customer.tier' }, { var: 'input.total' }] } });
    base.on('order.placed');
  });

  it('refuses a path the input does not have, and an output path (a start has no outputs)', () => {
    // @ts-expect-error input.amount is not a path of the input
    base.on('order.placed', { filter: { '>=': [{ var: 'input.amount' }, 100] } });
    // @ts-expect-error a filter cannot read outputs
    base.on('order.placed', { filter: { exists: 'outputs.charge' } });
  });

  it('publish resolves with what it started, found and refused', () => {
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [],
      handlers: {},
      kinds: [eventTriggers],
    });
    // Checked by the compiler only: nothing is published.
    const publish = (e: Parameters<typeof runner.publish>[0]) => runner.publish(e);
    expectTypeOf(publish).returns.resolves.toEqualTypeOf<PublishResult>();
    // @ts-expect-error an event needs an id
    const noId = () => publish({ name: 'e' });
    expectTypeOf(noId).toBeFunction();
  });
});
