/**
 * `pnpm demo`: an order workflow (reserve stock → charge payment → send email) with a simulated
 * clock, on the in-memory store or (`pnpm demo --store postgres`) on PostgreSQL. The payment service
 * fails twice and succeeds on attempt 3; every transition is printed as it is written.
 */
import { createRunner, defineHooks, type Snapshot, type Store, TaskError, workflow } from '@stepfold/engine';
import { type DemoStoreKind, openDemoStore, storeFromArgs } from './demo-store.js';

export const orderWorkflow = workflow('order', 1, {
  defaults: { retry: { maxAttempts: 3, initialMs: 2_000, factor: 2, maxMs: 30_000, jitter: 0.1 } },
})
  .task('reserve-stock', { handler: 'reserveStock', compensate: 'releaseStock' })
  .task('charge-payment', { handler: 'chargePayment', compensate: 'refundPayment' })
  .task('send-email', { handler: 'sendEmail' })
  .build();

/** Runs the demo on the given store; returns the final snapshot. `print` receives each line. */
export async function main(
  print: (line: string) => void = console.log,
  storeKind: DemoStoreKind = 'memory',
): Promise<Snapshot> {
  const demo = await openDemoStore(storeKind, 'orders', ['order-42']);
  try {
    print(`order-42 on the ${demo.description}\n`);
    return await run(demo.store, print);
  } finally {
    await demo.close();
  }
}

async function run(store: Store, print: (line: string) => void): Promise<Snapshot> {
  let now = Date.UTC(2026, 10, 22, 9, 0, 0);
  const clock = () => now;
  const stamp = (at: number) => `+${((at - Date.UTC(2026, 10, 22, 9, 0, 0)) / 1000).toFixed(3)}s`;
  let chargeCalls = 0;

  const runner = createRunner({
    store,
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
    hooks: defineHooks({
      onTransition: (e) => {
        const parts = [stamp(e.at), `v${e.v}`, e.type.padEnd(24), e.step ?? ''];
        if (e.attempt !== undefined) parts.push(`attempt ${e.attempt}`);
        if (e.detail) parts.push(`(${e.detail})`);
        print(parts.join('  '));
      },
    }),
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

// Run when executed directly (pnpm demo [--store postgres]), not when imported by the examples test.
if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    const s = await main(console.log, storeFromArgs(process.argv.slice(2)));
    process.exit(s.status === 'completed' ? 0 : 1);
  } catch (e) {
    console.error(`order demo: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  }
}
