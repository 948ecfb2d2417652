/** The code shown in the root README, kept here so CI type-checks and runs it. */
import {
  createHarness,
  createMemoryStore,
  createRunner,
  type Snapshot,
  TaskError,
  workflow,
} from '@stepfold/engine';
import * as z from 'zod';

export const order = workflow('order', 1)
  .input(z.object({ sku: z.string(), email: z.string() }))
  .task('reserve', { handler: 'reserveStock', compensate: 'releaseStock', input: { sku: 'input.sku' } })
  .task('charge', { handler: 'chargeCard', input: { reservation: 'outputs.reserve.reservation' } })
  .task('email', {
    handler: 'sendEmail',
    input: { to: 'input.email', paymentId: 'outputs.charge.paymentId' },
  })
  .build();

/** The runner part of the README; returns the snapshot after the first retry completes. */
export async function main(): Promise<{ first: Snapshot; final: Snapshot; harnessStatus: string }> {
  let now = 0;
  const runner = createRunner({
    store: createMemoryStore(), // or a PostgreSQL / Redis / MongoDB / DynamoDB store
    workflows: [order],
    clock: () => now,
    // Each handler's `input` is typed from its step's mapping; a missing handler does not compile.
    handlers: {
      reserveStock: async ({ input }) => ({ reservation: `R-${input.sku}` }),
      releaseStock: async () => null,
      chargeCard: async ({ input, attempt }) => {
        if (attempt < 2) throw new TaskError('gateway timeout', { code: 'GATEWAY' });
        return { paymentId: `P-${input.reservation}` };
      },
      sendEmail: async ({ input }) => ({ sent: `${input.paymentId} to ${input.to}` }),
    },
  });
  const first = await runner.client(order).start('order-42', { sku: 'BOOK-7', email: 'ada@example.com' });
  now = first.wakeAt ?? now;
  await runner.processDue(now);
  const final = (await runner.get('order-42'))!;

  // The same workflow as a pure function, with no store and no mocks.
  const h = createHarness(order).start({ sku: 'BOOK-7', email: 'ada@example.com' });
  h.complete('reserve', { reservation: 'R-1' });
  h.fail('charge', 'declined');
  h.advanceToWake();
  h.complete('charge', { paymentId: 'P-1' });
  h.complete('email');
  return { first, final, harnessStatus: h.status };
}
