import { workflow } from '@stepfold/engine';

/** reserve → charge → email, with reserve compensated by release. */
export const orderWorkflow = workflow('order', 1, {
  defaults: { retry: { maxAttempts: 3, initialMs: 1000, factor: 2, maxMs: 10_000, jitter: 0.2 } },
})
  .task('reserve', { handler: 'reserveStock', compensate: 'releaseStock', timeoutMs: 30_000 })
  .task('charge', { handler: 'chargeCard', compensate: 'refund', input: { amount: 'input.amount' } })
  .task('email', { handler: 'sendEmail' })
  .build();

/** wait for approval (with timeout), then sleep, then ship. */
export const approvalWorkflow = workflow('approval', 1)
  .task('draft', { handler: 'draft' })
  .wait('approve', { signal: 'approved', timeoutMs: 60_000, onTimeout: 'expire' })
  .sleep('cool', { ms: 5_000 })
  .task('ship', { handler: 'ship', end: true })
  .task('expire', { handler: 'expire' })
  .build();
