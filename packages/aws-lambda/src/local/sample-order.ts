/**
 * A sample order and an API Gateway event to drive it: what a local run tries first, and what the
 * package's tests and the bench's `requests-dynamo` row measure (one order, so their figures agree).
 */
import { type HandlerContext, TaskError, workflow } from '@stepfold/engine';
import type { ApiGatewayEvent } from '../lambda-types.js';

/** Input of {@link sampleOrder}. */
export interface SampleOrderInput {
  sku: string;
  amount: number;
  /** The gateway times out on this many attempts (retryable), then succeeds. */
  chargeFailures?: number;
  /** The card is declined: not retried, so the order compensates. */
  declineCharge?: boolean;
}

/** Order: reserve stock → a person approves (48 h deadline) → charge (backoff 1 s) → email. */
export const sampleOrder = workflow('order', 1, {
  defaults: { retry: { maxAttempts: 3, initialMs: 1_000, factor: 2, maxMs: 10_000, jitter: 0 } },
})
  .task('reserve-stock', { handler: 'reserveStock', compensate: 'releaseStock' })
  .human('approve', { timeoutMs: 48 * 3600_000 })
  .task('charge-payment', { handler: 'chargePayment', compensate: 'refundPayment' })
  .task('send-email', { handler: 'sendEmail' })
  .build();

/** The handlers of {@link sampleOrder}; `onCall` hears every call before it runs. */
export function sampleOrderHandlers(onCall: (ctx: HandlerContext) => void = () => {}) {
  const heard =
    <O>(fn: (ctx: HandlerContext) => O) =>
    (ctx: HandlerContext): O => {
      onCall(ctx);
      return fn(ctx);
    };
  const order = (ctx: HandlerContext) => ctx.workflowInput as SampleOrderInput;
  return {
    reserveStock: heard((ctx) => ({ reservation: `R-${order(ctx).sku}` })),
    releaseStock: heard(() => ({ released: true })),
    chargePayment: heard((ctx) => {
      const o = order(ctx);
      if (o.declineCharge) throw new TaskError('card declined', { code: 'CARD_DECLINED', retryable: false });
      if (ctx.attempt <= (o.chargeFailures ?? 0))
        throw new TaskError('gateway timeout', { code: 'GATEWAY_TIMEOUT' });
      return { paymentId: `P-${o.sku}-${o.amount}` };
    }),
    refundPayment: heard(() => ({ refunded: true })),
    sendEmail: heard(() => ({ sent: true })),
  };
}

/** An HTTP API (payload 2.0) request as API Gateway hands it to `api`, the body as JSON. */
export function apiRequest(method: string, path: string, body?: unknown): ApiGatewayEvent {
  return {
    rawPath: path,
    rawQueryString: '',
    headers: {},
    requestContext: { stage: '$default', http: { method, path } },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    isBase64Encoded: false,
  };
}
