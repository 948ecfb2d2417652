import { TaskError, workflow } from '@stepfold/engine';

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
