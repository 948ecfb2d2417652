/**
 * `pnpm demo`: an order workflow (reserve stock → charge payment → send email) on the in-memory
 * store with a simulated clock. The payment service fails twice and succeeds on attempt 3; every
 * transition is printed as it is written.
 */
import { createMemoryStore, createRunner, type Snapshot, TaskError, workflow } from '@stepfold/engine';

export const orderWorkflow = workflow('order', 1, {
  defaults: { retry: { maxAttempts: 3, initialMs: 2_000, factor: 2, maxMs: 30_000, jitter: 0.1 } },
})
  .task('reserve-stock', { handler: 'reserveStock', compensate: 'releaseStock' })
  .task('charge-payment', { handler: 'chargePayment', compensate: 'refundPayment' })
  .task('send-email', { handler: 'sendEmail' })
  .build();

/** Runs the demo; returns the final snapshot. `print` receives each line. */
export async function main(print: (line: string) => void = console.log): Promise<Snapshot> {
  let now = Date.UTC(2026, 10, 22, 9, 0, 0);
  const clock = () => now;
  const stamp = (at: number) => `+${((at - Date.UTC(2026, 10, 22, 9, 0, 0)) / 1000).toFixed(3)}s`;
  let chargeCalls = 0;

  const runner = createRunner({
    store: createMemoryStore(),
    workflows: [orderWorkflow],
    clock,
    handlers: {
      reserveStock: ({ input }) => ({ reservation: `R-${(input as { sku: string }).sku}` }),
      releaseStock: () => null,
      chargePayment: ({ attempt, idempotencyKey }) => {
        chargeCalls++;
        if (attempt < 3) {
          throw new TaskError(`payment gateway timeout (attempt ${attempt}, key ${idempotencyKey})`, {
            code: 'GATEWAY',
          });
        }
        return { paymentId: 'P-1001', attempt };
      },
      refundPayment: () => null,
      sendEmail: ({ outputs }) => ({
        sent: true,
        payment: (outputs['charge-payment'] as { paymentId: string }).paymentId,
      }),
    },
    hooks: {
      onTransition: (e) => {
        const parts = [stamp(e.at), `v${e.v}`, e.type.padEnd(24), e.step ?? ''];
        if (e.attempt !== undefined) parts.push(`attempt ${e.attempt}`);
        if (e.detail) parts.push(`(${e.detail})`);
        print(parts.join('  '));
      },
    },
  });

  let s = await runner.start('order', 'order-42', { sku: 'BOOK-7', amount: 25 });
  // Simulated time: jump to each wake-up (a retry backoff) and let the runner process what is due.
  while (s.status !== 'completed' && s.status !== 'failed' && s.wakeAt !== null) {
    now = s.wakeAt;
    await runner.processDue();
    s = (await runner.get('order-42'))!;
  }
  print(`\nstatus: ${s.status}; payment attempts: ${chargeCalls}; output: ${JSON.stringify(s.output)}`);
  return s;
}

// Run when executed directly (pnpm demo), not when imported by the examples test.
if (import.meta.url === `file://${process.argv[1]}`) {
  const s = await main();
  process.exit(s.status === 'completed' ? 0 : 1);
}
