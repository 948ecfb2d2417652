import { defineWorkflow, TaskError, workflow } from '@stepfold/engine';
import { z } from 'zod';

/** A claim that waits for a manager's decision, then pays and waits for a receipt. */
export const approval = workflow('approval', 1)
  .task('prepare', { handler: 'prepare' })
  .human('manager')
  .task('pay', { handler: 'pay', input: { amount: 'input.amount' } })
  .wait('receipt', { signal: 'receipt' })
  .build();

/** A job parked in dlq when its handler fails (one attempt): a requeue with a bigger size fixes it. */
export const job = workflow('job', 1)
  .task('run', {
    handler: 'runJob',
    onFailure: 'dlq',
    retry: { maxAttempts: 1 },
    input: { size: 'input.size' },
  })
  .build();

/** Text that would run script if it reached the page unescaped. */
export const HOSTILE = {
  script: '<script>window.__pwned = "script"</script>',
  img: '<img src=x onerror="window.__pwned = \'img\'">',
};

/** An id made only of characters the id rules allow, chosen to confuse URLs (slashes, dots, @, :, +, =). */
export const HOSTILE_ID = 'hostile/../..//evil.example:80@x+y=z';

/** The handlers the tests' "workers" run; `seen` records the inputs runJob got. */
export function handlers(seen: { runJob: unknown[] } = { runJob: [] }) {
  return {
    prepare: () => ({ ok: true }),
    pay: ({ input }: { input: unknown }) => ({ paid: (input as { amount?: number }).amount ?? 0 }),
    runJob: ({ input }: { input: unknown }) => {
      seen.runJob.push(input);
      const size = (input as { size?: number }).size ?? 0;
      if (size < 2) throw new TaskError(`size ${size} too small ${HOSTILE.img}`, { code: 'TOO_SMALL' });
      return { done: size };
    },
  };
}

/** What the dispatch workflow's pickup signal must carry (a zod schema: Standard Schema and JSON Schema). */
export const pickupSchema = z.object({ carrier: z.string().min(1), slot: z.number().int().positive() });

/**
 * Charges (a pivot: past it nothing rolls back), then waits in parallel for a pickup or a label
 * (join any: the first to arrive wins and the other branch's wait is skipped), then notifies.
 */
export const dispatch = workflow('dispatch', 1)
  .signal('pickup', pickupSchema)
  .signal('label', z.object({ code: z.string() }))
  .task('charge', { handler: 'charge', pivot: true })
  .parallel('ship', { branches: ['await-pickup', 'await-label'], join: 'any', next: 'notify' })
  .wait('await-pickup', { signal: 'pickup', end: true })
  .wait('await-label', { signal: 'label', end: true })
  .task('notify', { handler: 'notify' })
  .build();

/** Steps of the tall workflow; step `s24` fails into dlq, far down a diagram 30 steps tall. */
export const TALL_STEPS = Array.from({ length: 30 }, (_, i) => `s${String(i + 1).padStart(2, '0')}`);

/** A 30-step sequence (a JSON definition) whose 24th step parks in dlq: far taller than a screen. */
export const tall = defineWorkflow({
  name: 'tall',
  version: 1,
  start: 's01',
  steps: Object.fromEntries(
    TALL_STEPS.map((id, i) => [
      id,
      {
        kind: 'task',
        handler: id === 's24' ? 'boom' : 'tick',
        ...(id === 's24' ? { onFailure: 'dlq', retry: { maxAttempts: 1 } } : {}),
        ...(TALL_STEPS[i + 1] ? { next: TALL_STEPS[i + 1] } : {}),
      },
    ]),
  ),
});

/** Handlers of the dispatch and tall workflows. */
export const moreHandlers = {
  charge: () => ({ charged: true }),
  notify: () => ({ notified: true }),
  tick: () => ({ ok: true }),
  boom: () => {
    throw new TaskError('the carrier API answered 502', { code: 'CARRIER_DOWN' });
  },
};
