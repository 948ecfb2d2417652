/**
 * The worker's workflows and handlers. The handlers do nothing real: each call is written to the
 * example's call log (instance, step, attempt, idempotency key, worker pid) and then behaves as
 * the workflow input asks, so tests can make a step slow or failing:
 *
 *   { "behaviour": { "charge-payment": { "delayMs": 60000, "delayAttempts": 1 } } }
 *
 * In an app, a handler would call a payment API or an email service with `ctx.idempotencyKey`.
 */
import { type Handler, type HandlerContext, TaskError, workflow } from '@stepfold/engine';
import type { CallLog } from './call-log.js';

/** Order saga: reserve stock → charge payment → send email; a failure releases and refunds. */
export const orderWorkflow = workflow('order', 1, {
  defaults: { retry: { maxAttempts: 3, initialMs: 500, factor: 2, maxMs: 5_000, jitter: 0 } },
})
  .task('reserve-stock', { handler: 'reserveStock', compensate: 'releaseStock' })
  // A payment call that has not answered in 3 s counts as lost: its deadline passes, a tick
  // re-dispatches it (same idempotency key, next attempt) to whichever worker wins that write.
  .task('charge-payment', { handler: 'chargePayment', compensate: 'refundPayment', timeoutMs: 3_000 })
  .task('send-email', { handler: 'sendEmail' })
  .build();

/** Human approval: draft → a person approves or rejects (48 h timeout) → publish. */
export const approvalWorkflow = workflow('approval', 1)
  .task('draft', { handler: 'createDraft', compensate: 'discardDraft' })
  .human('review', { timeoutMs: 48 * 3600_000 })
  .task('publish', { handler: 'publishDocument' })
  .build();

export const workflows = [orderWorkflow, approvalWorkflow];

/**
 * What the input can ask of one step's handler, keyed in `input.behaviour` by step id (or
 * `<step id>:compensate` for its compensation).
 */
export interface Behaviour {
  /** Sleep this long before answering (aborted by cancel, abort or the deadline). */
  delayMs?: number;
  /** Only the first N attempts sleep (default: every attempt). */
  delayAttempts?: number;
  /** The first N attempts fail. */
  failAttempts?: number;
  /** Error code of those failures (default `INJECTED`). */
  failCode?: string;
  /** Those failures are not worth retrying. */
  nonRetryable?: boolean;
}

function behaviourOf(ctx: HandlerContext): Behaviour {
  const all = (ctx.workflowInput as { behaviour?: Record<string, Behaviour> } | null)?.behaviour;
  const key = ctx.phase === 'compensate' ? `${ctx.step}:compensate` : ctx.step;
  const b = all && typeof all === 'object' && Object.hasOwn(all, key) ? all[key] : undefined;
  return b && typeof b === 'object' ? b : {};
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The handlers, each recording its calls in `log`. */
export function createHandlers(log: CallLog) {
  const logged =
    (fn: (ctx: HandlerContext) => unknown): Handler =>
    async (ctx) => {
      const row = await log.begin({
        instance: ctx.instanceId,
        step: ctx.step,
        phase: ctx.phase,
        attempt: ctx.attempt,
        idempotencyKey: ctx.idempotencyKey,
      });
      try {
        const b = behaviourOf(ctx);
        if (b.delayMs && ctx.attempt <= (b.delayAttempts ?? Number.POSITIVE_INFINITY)) {
          await sleep(b.delayMs, ctx.signal);
        }
        if (ctx.attempt <= (b.failAttempts ?? 0)) {
          throw new TaskError(`${ctx.step} failed on attempt ${ctx.attempt} (as the input asked)`, {
            code: b.failCode ?? 'INJECTED',
            ...(b.nonRetryable ? { retryable: false } : {}),
          });
        }
        const out = await fn(ctx);
        await log.end(row, 'ok');
        return out;
      } catch (e) {
        await log.end(row, 'error', e instanceof Error ? e.message : String(e)).catch(() => {});
        throw e;
      }
    };
  const order = (ctx: HandlerContext) => (ctx.workflowInput ?? {}) as { sku?: string; amount?: number };
  return {
    reserveStock: logged((ctx) => ({ reservation: `R-${order(ctx).sku}` })),
    releaseStock: logged((ctx) => ({ released: `R-${order(ctx).sku}` })),
    chargePayment: logged((ctx) => ({
      paymentId: `P-${order(ctx).sku}-${order(ctx).amount}`,
      key: ctx.idempotencyKey,
    })),
    refundPayment: logged((ctx) => ({ refunded: `P-${order(ctx).sku}-${order(ctx).amount}` })),
    sendEmail: logged((ctx) => ({
      sent: true,
      payment: (ctx.outputs['charge-payment'] as { paymentId: string }).paymentId,
    })),
    createDraft: logged((ctx) => ({
      draft: `draft:${(ctx.workflowInput as { title?: string } | null)?.title ?? 'untitled'}`,
    })),
    discardDraft: logged(() => ({ discarded: true })),
    publishDocument: logged((ctx) => ({
      published: (ctx.outputs['draft'] as { draft: string }).draft.replace(/^draft:/, 'doc:'),
    })),
  };
}
