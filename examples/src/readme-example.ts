/** The code shown in the root README, kept here so CI type-checks and runs it. */
import { createMemoryStore, createRunner, type Snapshot, TaskError, workflow } from '@stepfold/engine';
import { createHarness } from '@stepfold/engine/testing';

export const order = workflow('order', 1)
  .task('reserve', { handler: 'reserveStock', compensate: 'releaseStock' })
  .task('charge', { handler: 'chargeCard', retry: { maxAttempts: 3, initialMs: 1000 } })
  .task('email', { handler: 'sendEmail' })
  .build();

/** The runner part of the README; returns the snapshot after the first retry completes. */
export async function main(): Promise<{ first: Snapshot; final: Snapshot; harnessStatus: string }> {
  let now = 0;
  const runner = createRunner({
    store: createMemoryStore(), // or a PostgreSQL / Redis / MongoDB / DynamoDB store
    workflows: [order],
    clock: () => now,
    handlers: {
      reserveStock: async () => ({ reservation: 'R-1' }),
      releaseStock: async () => null,
      chargeCard: async ({ attempt }) => {
        if (attempt < 2) throw new TaskError('gateway timeout', { code: 'GATEWAY' });
        return { paymentId: 'P-1' };
      },
      sendEmail: async () => null,
    },
  });
  const first = await runner.start('order', 'order-42', { sku: 'BOOK-7' });
  now = first.wakeAt ?? now;
  await runner.processDue(now);
  const final = (await runner.get('order-42'))!;

  // The same workflow as a pure function, with no store and no mocks.
  const h = createHarness(order).start({ sku: 'BOOK-7' });
  h.complete('reserve', { reservation: 'R-1' });
  h.fail('charge', 'declined');
  h.advanceToWake();
  h.complete('charge', { paymentId: 'P-1' });
  h.complete('email');
  return { first, final, harnessStatus: h.status };
}
