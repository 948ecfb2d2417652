// The harness under Node's own test runner (no vitest anywhere): `node --test` runs this file.
// It drives the workflow's real async handlers with the fake clock.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createHarness, TaskError, workflow } from '@stepfold/engine';

const order = workflow('order', 1)
  .task('reserve', { handler: 'reserveStock', compensate: 'releaseStock' })
  .task('charge', { handler: 'chargeCard', retry: { maxAttempts: 3, initialMs: 1000 } })
  .build();

const handlers = {
  reserveStock: async ({ workflowInput }) => ({ reservation: `R-${workflowInput.sku}` }),
  releaseStock: async () => null,
  chargeCard: async ({ attempt }) => {
    if (attempt < 3) throw new TaskError('gateway timeout', { code: 'GATEWAY' });
    return { paymentId: 'P-1' };
  },
};

test('real handlers run to completion through two retries on the fake clock', async () => {
  const h = createHarness(order).start({ sku: 'BOOK' });
  await h.run(handlers, { timers: 'advance' });
  assert.equal(h.status, 'completed');
  assert.deepEqual(h.output('charge'), { paymentId: 'P-1' });
  assert.equal(h.snapshot.steps.charge.attempt, 3);
  assert.ok(h.now >= 3000, 'the clock advanced through both backoffs');
  assert.deepEqual(h.replayed(), h.snapshot);
});

test('a declined charge compensates the reservation', async () => {
  const h = createHarness(order).start({ sku: 'PEN' });
  await h.run(
    {
      ...handlers,
      chargeCard: () => {
        throw new TaskError('declined', { code: 'DECLINED', retryable: false });
      },
    },
    { timers: 'advance' },
  );
  assert.equal(h.status, 'failed');
  assert.equal(h.snapshot.steps.reserve.status, 'compensated');
  assert.equal(h.snapshot.error.code, 'DECLINED');
});
