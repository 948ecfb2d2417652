/**
 * The workflows this Worker runs and their handlers. Handlers are plain async functions: in a
 * real app they would call `fetch` (a payment API, an email service) with `ctx.idempotencyKey`;
 * here they are no-ops that fail on demand, driven by the workflow input, so the tests can
 * exercise retries and compensation. The inputs are declared with `zod/mini`, whose functional API
 * keeps the bundle small (see the README).
 */
import { type Handler, TaskError, workflow } from '@stepfold/engine';
import * as z from 'zod/mini';

/** Input of the order workflow. The two `…Charge…` fields make the payment step fail on demand. */
const orderInput = z.object({
  sku: z.string(),
  amount: z.number(),
  /** The card is declined: a non-retryable failure, so the saga compensates at once. */
  declineCharge: z.optional(z.boolean()),
  /** The payment gateway times out on this many attempts (retryable), then succeeds. */
  chargeFailures: z.optional(z.number()),
});

/** Input of the publish workflow. */
const publishInput = z.object({ title: z.string() });

/** Order saga: reserve stock → charge payment → send email; a failure releases and refunds. */
export const orderWorkflow = workflow('order', 1, {
  // Retry backoff: 1 s, then 2 s; no jitter so the wake time is easy to read in the snapshot.
  defaults: { retry: { maxAttempts: 3, initialMs: 1_000, factor: 2, maxMs: 10_000, jitter: 0 } },
})
  .input(orderInput)
  .task('reserve-stock', { handler: 'reserveStock', compensate: 'releaseStock' })
  .task('charge-payment', { handler: 'chargePayment', compensate: 'refundPayment' })
  .task('send-email', { handler: 'sendEmail' })
  .build();

/** Human approval: draft → a person approves or rejects (48 h timeout) → publish. */
export const publishWorkflow = workflow('publish', 1)
  .input(publishInput)
  .task('draft', { handler: 'createDraft', compensate: 'discardDraft' })
  .human('review', { timeoutMs: 48 * 3600_000 })
  .task('publish', { handler: 'publishDocument' })
  .build();

export const workflows = [orderWorkflow, publishWorkflow];

/** Input of the order workflow, as `start` checked it. */
export type OrderInput = z.infer<typeof orderInput>;

/** Input of the publish workflow, as `start` checked it. */
export type PublishInput = z.infer<typeof publishInput>;

// `start` refused any other input (400 INVALID_INPUT, nothing written): the handlers read it as declared.
const order = (input: unknown) => input as OrderInput;

export const handlers = {
  reserveStock: async ({ workflowInput, idempotencyKey }) => ({
    reservation: `R-${order(workflowInput).sku}`,
    key: idempotencyKey,
  }),
  // Compensations see the workflow input; `idempotencyKey` is the one the forward step had.
  releaseStock: async ({ workflowInput, idempotencyKey }) => ({
    released: `R-${order(workflowInput).sku}`,
    key: idempotencyKey,
  }),
  chargePayment: async ({ workflowInput, attempt }) => {
    const o = order(workflowInput);
    if (o.declineCharge) {
      throw new TaskError('card declined', { code: 'CARD_DECLINED', retryable: false });
    }
    if (attempt <= (o.chargeFailures ?? 0)) {
      throw new TaskError(`payment gateway timeout on attempt ${attempt}`, { code: 'GATEWAY_TIMEOUT' });
    }
    return { paymentId: `P-${o.sku}-${o.amount}`, attempt };
  },
  refundPayment: async ({ workflowInput }) => {
    const o = order(workflowInput);
    return { refunded: `P-${o.sku}-${o.amount}` };
  },
  sendEmail: async ({ outputs }) => ({
    sent: true,
    payment: (outputs['charge-payment'] as { paymentId: string }).paymentId,
  }),
  createDraft: async ({ workflowInput }) => ({
    draft: `draft:${(workflowInput as PublishInput).title}`,
  }),
  discardDraft: async () => ({ discarded: true }),
  publishDocument: async ({ outputs }) => ({
    published: (outputs['draft'] as { draft: string }).draft.replace(/^draft:/, 'doc:'),
  }),
} satisfies Record<string, Handler>;
