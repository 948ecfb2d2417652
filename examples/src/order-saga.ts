/**
 * An order saga on the in-memory store with a simulated clock: stock is reserved, the card is
 * declined on every attempt, and the compensation releases the reservation. The instance ends
 * `failed` with the payment error kept. Exits non-zero if the outcome is anything else.
 */
import {
  createMemoryStore,
  createRunner,
  defineHooks,
  isTerminal,
  type Snapshot,
  type Status,
  TaskError,
  workflow,
} from '@stepfold/engine';

export const orderSaga = workflow('order-saga', 1, {
  defaults: { retry: { maxAttempts: 3, initialMs: 1_000, factor: 2, maxMs: 10_000, jitter: 0.1 } },
})
  .task('reserve-stock', { handler: 'reserveStock', compensate: 'releaseStock', input: { sku: 'input.sku' } })
  .task('charge-payment', { handler: 'chargePayment', compensate: 'refundPayment' })
  .task('send-email', { handler: 'sendEmail' })
  .build();

/** What the example did: the final status and snapshot, and every handler call in order. */
export interface OrderSagaResult {
  status: Status;
  snapshot: Snapshot;
  calls: string[];
}

/** Runs the saga to its end; `print` receives each line. */
export async function main(print: (line: string) => void = console.log): Promise<OrderSagaResult> {
  let now = Date.UTC(2026, 10, 22, 9, 0, 0);
  const calls: string[] = [];
  const stock = new Map<string, number>([['BOOK-7', 3]]);

  const runner = createRunner({
    store: createMemoryStore(),
    workflows: [orderSaga],
    clock: () => now,
    handlers: {
      reserveStock: ({ input, idempotencyKey }) => {
        const { sku } = input as { sku: string };
        calls.push('reserveStock');
        stock.set(sku, (stock.get(sku) ?? 0) - 1);
        return { reservation: `R-${idempotencyKey}`, sku };
      },
      releaseStock: ({ outputs }) => {
        const { sku } = outputs['reserve-stock'] as { sku: string };
        calls.push('releaseStock');
        stock.set(sku, (stock.get(sku) ?? 0) + 1);
        return null;
      },
      chargePayment: ({ attempt }) => {
        calls.push(`chargePayment#${attempt}`);
        throw new TaskError('card declined by issuer', { code: 'DECLINED' });
      },
      refundPayment: () => {
        calls.push('refundPayment');
        return null;
      },
      sendEmail: () => {
        calls.push('sendEmail');
        return null;
      },
    },
    hooks: defineHooks({
      onTransition: (e) => print(`v${e.v}  ${e.type.padEnd(26)} ${e.step ?? ''} ${e.detail ?? ''}`.trimEnd()),
    }),
  });

  let s = await runner.start('order-saga', 'order-7', { sku: 'BOOK-7', amount: 25 });
  // Simulated time: jump to each wake-up (retry backoffs) and let the runner process what is due.
  while (!isTerminal(s.status) && s.status !== 'dlq' && s.wakeAt !== null) {
    now = s.wakeAt;
    await runner.processDue(now);
    s = (await runner.get('order-7'))!;
  }
  print(
    `\nstatus: ${s.status}; error: ${s.error?.code} at ${s.error?.step}; stock left: ${stock.get('BOOK-7')}`,
  );
  print(`calls: ${calls.join(' → ')}`);
  return { status: s.status, snapshot: s, calls };
}

/** The outcome this example promises. */
export function isExpected(r: OrderSagaResult): boolean {
  return (
    r.status === 'failed' &&
    r.snapshot.error?.code === 'DECLINED' &&
    r.snapshot.steps['reserve-stock']?.status === 'compensated' &&
    r.calls.filter((c) => c === 'releaseStock').length === 1 &&
    !r.calls.includes('refundPayment') &&
    !r.calls.includes('sendEmail')
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await main();
  process.exit(isExpected(r) ? 0 : 1);
}
