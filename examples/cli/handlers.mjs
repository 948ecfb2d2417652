// Handlers of order-saga.yaml for `stepfold run`: plain ESM, no imports needed. A thrown error's
// `code` is recorded (and matched by the retry policy's nonRetryable), as a TaskError's would be.

/** Reserves one unit of the SKU. */
export function reserveStock({ input, idempotencyKey }) {
  return { reservation: `R-${idempotencyKey}`, sku: input.sku ?? 'BOOK-7' };
}

/** Gives the reservation back (the compensation of reserveStock). */
export function releaseStock({ outputs }) {
  return { released: outputs['reserve-stock']?.reservation ?? null };
}

/** Times out twice, then charges; declines at once when the order says so. */
export function chargePayment({ workflowInput, attempt }) {
  const order = workflowInput ?? {};
  if (order.decline) throw Object.assign(new Error('card declined by issuer'), { code: 'DECLINED' });
  if (attempt < 3) throw Object.assign(new Error('gateway timeout'), { code: 'GATEWAY_TIMEOUT' });
  return { paymentId: `P-${order.sku ?? 'BOOK-7'}-${attempt}`, amount: order.amount ?? 25 };
}

/** Refunds the charge (the compensation of chargePayment). */
export function refundPayment() {
  return { refunded: true };
}

/** Sends the receipt. */
export function sendReceipt({ input }) {
  return { sent: `receipt for ${input.payment} to ${input.email ?? 'the customer'}` };
}
