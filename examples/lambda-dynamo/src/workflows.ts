/**
 * The workflows this Lambda runs. Handlers are no-ops that fail on demand (driven by the input)
 * and report each call to `record`, so a test can see what ran; in an app they would call a
 * payment API or an email service with `ctx.idempotencyKey`.
 */
import { type Handler, type HandlerContext, TaskError, workflow } from '@stepfold/engine';

/** Order saga: reserve stock → charge payment → send email; a failure releases and refunds. */
export const orderWorkflow = workflow('order', 1, {
  // Backoff 2 s, then 4 s, no jitter: each retry is a wake message delayed by whole seconds.
  defaults: { retry: { maxAttempts: 3, initialMs: 2_000, factor: 2, maxMs: 60_000, jitter: 0 } },
})
  .task('reserve-stock', { handler: 'reserveStock', compensate: 'releaseStock' })
  .task('charge-payment', { handler: 'chargePayment', compensate: 'refundPayment' })
  .task('send-email', { handler: 'sendEmail' })
  .build();

/** A reminder 45 minutes after the start: longer than one SQS delay (900 s) can carry. */
export const reminderWorkflow = workflow('reminder', 1)
  .sleep('wait-45-min', { ms: 45 * 60_000 })
  .task('send-reminder', { handler: 'sendReminder' })
  .build();

/**
 * Human approval: draft → a person approves or rejects (48 h timeout) → publish. Other signals
 * (comments, notes) are kept in the inbox for the reviewer instead of being refused.
 */
export const approvalWorkflow = workflow('approval', 1, { acceptUnknownSignals: true })
  .task('draft', { handler: 'createDraft', compensate: 'discardDraft' })
  .human('review', { timeoutMs: 48 * 3600_000 })
  .task('publish', { handler: 'publishDocument' })
  .build();

export const workflows = [orderWorkflow, reminderWorkflow, approvalWorkflow];

/** One handler call, as reported to `record`. */
export interface Call {
  instance: string;
  step: string;
  phase: 'run' | 'compensate';
  attempt: number;
  idempotencyKey: string;
  at: number;
}

/** Input of the order workflow. */
export interface OrderInput {
  sku: string;
  amount: number;
  /** The payment gateway times out on this many attempts (retryable), then succeeds. */
  chargeFailures?: number;
  /** The card is declined: non-retryable, the saga compensates at once. */
  declineCharge?: boolean;
}

/** The handlers, reporting each call to `record` (default: a JSON log line). */
export function createHandlers(
  record: (call: Call) => void = (c) => console.log(JSON.stringify({ call: c })),
  clock: () => number = Date.now,
) {
  const logged =
    <O>(fn: (ctx: HandlerContext) => O | Promise<O>): Handler<unknown, O> =>
    (c) => {
      record({
        instance: c.instanceId,
        step: c.step,
        phase: c.phase,
        attempt: c.attempt,
        idempotencyKey: c.idempotencyKey,
        at: clock(),
      });
      return fn(c);
    };
  const order = (ctx: HandlerContext) => ctx.workflowInput as OrderInput;
  return {
    reserveStock: logged((ctx) => ({ reservation: `R-${order(ctx).sku}` })),
    releaseStock: logged((ctx) => ({ released: `R-${order(ctx).sku}` })),
    chargePayment: logged((ctx) => {
      const o = order(ctx);
      if (o.declineCharge) throw new TaskError('card declined', { code: 'CARD_DECLINED', retryable: false });
      if (ctx.attempt <= (o.chargeFailures ?? 0)) {
        throw new TaskError(`payment gateway timeout on attempt ${ctx.attempt}`, { code: 'GATEWAY_TIMEOUT' });
      }
      return { paymentId: `P-${o.sku}-${o.amount}`, attempt: ctx.attempt };
    }),
    refundPayment: logged((ctx) => ({ refunded: `P-${order(ctx).sku}` })),
    sendEmail: logged((ctx) => ({
      sent: true,
      payment: (ctx.outputs['charge-payment'] as { paymentId: string }).paymentId,
    })),
    sendReminder: logged((ctx) => ({ reminded: true, at: clock(), key: ctx.idempotencyKey })),
    createDraft: logged((ctx) => ({
      draft: `draft:${(ctx.workflowInput as { title?: string })?.title ?? 'untitled'}`,
    })),
    discardDraft: logged(() => ({ discarded: true })),
    publishDocument: logged((ctx) => ({
      published: (ctx.outputs['draft'] as { draft: string }).draft.replace(/^draft:/, 'doc:'),
    })),
  };
}
