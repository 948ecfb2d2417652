/**
 * The serverless soak's orders: the workflows (short timings, so a CI run takes seconds), each
 * order's designed end, handlers that apply their effects to a ledger keyed by idempotency key (an
 * outside system that deduplicates, as a payment gateway does), and the oracles over the final
 * snapshots, the ledger and the completions the runners wrote.
 */
import { type HandlerContext, type RunnerHooks, type Snapshot, TaskError, workflow } from '@stepfold/engine';

/** Handler deadline: a task whose invocation was killed is due again this soon (the sweep takes it). */
export const TASK_TIMEOUT_MS = 2_000;
/** The approval deadline of an order that gets its decision. */
export const APPROVAL_MS = 20_000;
/** The approval deadline of an order designed to lapse (nobody decides). */
export const LAPSE_MS = 2_000;

// Enough attempts that kills (each costs the attempt it hit) never exhaust a step designed to
// succeed; the backoff stays within a second or two (one SQS delay each).
const options = {
  defaults: {
    retry: { maxAttempts: 6, initialMs: 500, factor: 2, maxMs: 1_000, jitter: 0 },
    timeoutMs: TASK_TIMEOUT_MS,
  },
};

/** reserve → approve (deadline) → charge (retried) → a short sleep → email. */
function orderWorkflow(name: string, approvalMs: number) {
  return workflow(name, 1, options)
    .task('reserve-stock', { handler: 'reserveStock', compensate: 'releaseStock' })
    .human('approve', { timeoutMs: approvalMs })
    .task('charge-payment', { handler: 'chargePayment', compensate: 'refundPayment' })
    .sleep('cool-off', { ms: 1_000 })
    .task('send-email', { handler: 'sendEmail' })
    .build();
}

/** The soak's workflows: the order, and the same order with a short approval deadline. */
export const soakWorkflows = [
  orderWorkflow('soak-order', APPROVAL_MS),
  orderWorkflow('soak-order-lapse', LAPSE_MS),
] as const;

/** What the driver does at the approval step. */
export type Decision = 'approve' | 'reject' | 'cancel' | 'none' | 'approve-then-cancel-in-backoff';

/** An order's input: how its handlers behave. */
export interface SoakOrderInput {
  /** Attempts of `charge-payment` that time out (retryable) before one succeeds. */
  chargeFailures?: number;
  /** The step that refuses for good (non-retryable). */
  declineAt?: 'charge-payment' | 'send-email';
}

/** One order: its workflow, input, the driver's decision and its designed end. */
export interface OrderDesign {
  id: string;
  workflow: (typeof soakWorkflows)[number]['name'];
  input: SoakOrderInput;
  decision: Decision;
  status: 'completed' | 'failed' | 'cancelled';
  /** Steps compensated at the end. */
  compensated: string[];
  /** Effects applied (`run:step`, `compensate:step`), in any order. */
  effects: string[];
}

const FORWARD = ['run:reserve-stock', 'run:charge-payment', 'run:send-email'];
const UNDO_RESERVE = ['run:reserve-stock', 'compensate:reserve-stock'];

/** Order number `i`'s design: a mix of completions, retries, refusals, a cancel and a lapsed deadline. */
export function design(i: number, prefix: string): OrderDesign {
  const id = `${prefix}-${i}`;
  const order = (
    workflow: OrderDesign['workflow'],
    input: SoakOrderInput,
    decision: Decision,
    status: OrderDesign['status'],
    compensated: string[],
    effects: string[],
  ): OrderDesign => ({ id, workflow, input, decision, status, compensated, effects });
  switch (i % 9) {
    case 1: // the charge times out twice, then goes through (two delayed wakes)
      return order('soak-order', { chargeFailures: 2 }, 'approve', 'completed', [], FORWARD);
    case 2: // the approver rejects: the reservation is released
      return order('soak-order', {}, 'reject', 'failed', ['reserve-stock'], UNDO_RESERVE);
    case 3: // the card is declined: nothing charged, the reservation released
      return order(
        'soak-order',
        { declineAt: 'charge-payment' },
        'approve',
        'failed',
        ['reserve-stock'],
        UNDO_RESERVE,
      );
    case 4: // cancelled while it waits for approval
      return order('soak-order', {}, 'cancel', 'cancelled', ['reserve-stock'], UNDO_RESERVE);
    case 5: // nobody decides: the deadline's schedule fires, the order fails and releases the stock
      return order('soak-order-lapse', {}, 'none', 'failed', ['reserve-stock'], UNDO_RESERVE);
    case 6: // the gateway never answers: retries run out
      return order(
        'soak-order',
        { chargeFailures: 99 },
        'approve',
        'failed',
        ['reserve-stock'],
        UNDO_RESERVE,
      );
    case 7: // the email is refused after the charge: refunded and released
      return order(
        'soak-order',
        { declineAt: 'send-email' },
        'approve',
        'failed',
        ['charge-payment', 'reserve-stock'],
        [...FORWARD.slice(0, 2), 'compensate:charge-payment', 'compensate:reserve-stock'],
      );
    case 8: // approved, then cancelled while the charge waits out a backoff (its delayed wake stays queued)
      return order(
        'soak-order',
        { chargeFailures: 99 },
        'approve-then-cancel-in-backoff',
        'cancelled',
        ['reserve-stock'],
        UNDO_RESERVE,
      );
    default:
      return order('soak-order', {}, 'approve', 'completed', [], FORWARD);
  }
}

/**
 * What the outside world saw: each effect applied once per idempotency key (and phase); a call
 * with a key already applied is a re-run (at-least-once delivery, allowed and counted).
 */
export class EffectLedger {
  /** `key|phase` → the effect (`phase:step`) and its instance. */
  readonly applied = new Map<string, { instance: string; effect: string }>();
  calls = 0;
  reruns = 0;

  /** Applies the effect of a successful call. */
  apply(ctx: HandlerContext): void {
    this.calls++;
    const k = `${ctx.idempotencyKey}|${ctx.phase}`;
    if (this.applied.has(k)) {
      this.reruns++;
      return;
    }
    this.applied.set(k, { instance: ctx.instanceId, effect: `${ctx.phase}:${ctx.step}` });
  }

  /** The effects applied to `instance`, sorted. */
  of(instance: string): string[] {
    return [...this.applied.values()]
      .filter((e) => e.instance === instance)
      .map((e) => e.effect)
      .sort();
  }
}

/**
 * The handlers. `alive()` is false once the invocation running them was killed: a dead process
 * runs nothing further, so its handler never returns (and applies nothing); `applied()` is told of
 * each effect applied (where a kill can land before the result is written).
 */
export function soakHandlers(ledger: EffectLedger, probe: { alive(): boolean; applied(): void }) {
  const alive = () => probe.alive();
  const frozen = () => new Promise<never>(() => {});
  const act = async (ctx: HandlerContext) => {
    if (!alive()) return frozen();
    const input = ctx.workflowInput as SoakOrderInput;
    if (ctx.phase === 'run' && ctx.step === 'charge-payment' && ctx.attempt <= (input.chargeFailures ?? 0))
      throw new TaskError('gateway timeout', { code: 'GATEWAY_TIMEOUT' });
    if (ctx.phase === 'run' && input.declineAt === ctx.step)
      throw new TaskError(`${ctx.step} refused`, { code: 'DECLINED', retryable: false });
    await new Promise((r) => setTimeout(r, 1 + (ctx.attempt % 5)));
    if (!alive()) return frozen();
    ledger.apply(ctx);
    probe.applied();
    if (!alive()) return frozen();
    return { done: ctx.step, phase: ctx.phase, attempt: ctx.attempt };
  };
  return {
    reserveStock: act,
    releaseStock: act,
    chargePayment: act,
    refundPayment: act,
    sendEmail: act,
  };
}

/** Completions the runners wrote (step completed, compensation completed), by who wrote them. */
export class CompletionLog {
  readonly records = new Map<string, string[]>();

  /** Hooks recording each completion, for the container `name`, while `alive()`. */
  hooks(name: string, alive: () => boolean): RunnerHooks {
    const add = (key: string, s: Snapshot) => {
      if (!alive()) return;
      this.records.set(key, [...(this.records.get(key) ?? []), `v${s.version} by ${name}`]);
    };
    return {
      onStepCompleted: (step, s) =>
        add(`${s.id} run ${s.run} step ${step} #${s.steps[step]?.iteration ?? 0}`, s),
      onCompensation: (entry, s) => {
        if (entry.type === 'compensation.completed') add(`${s.id} run ${s.run} undo ${entry.step}`, s);
      },
    };
  }

  /** A completion written twice is a violation (two accepted results of one execution). */
  violations(): string[] {
    return [...this.records]
      .filter(([, by]) => by.length > 1)
      .map(([key, by]) => `completed ${by.length} times: ${key} (${by.join('; ')})`);
  }
}

const FINAL = new Set(['completed', 'failed', 'cancelled', 'aborted']);

/** Violations of one order's end: status, compensations, leftovers, and its effects. */
export function checkOrder(want: OrderDesign, s: Snapshot | null, effects: string[]): string[] {
  if (!s) return [`${want.id}: no snapshot`];
  const out: string[] = [];
  if (!FINAL.has(s.status)) out.push(`${want.id}: not final (${s.status} at ${s.active.join(',')})`);
  if (s.status !== want.status) out.push(`${want.id}: status ${s.status}, designed ${want.status}`);
  const tasks = Object.values(s.tasks);
  if (tasks.length)
    out.push(`${want.id}: left dispatched: ${tasks.map((t) => `${t.phase}:${t.step}`).join(', ')}`);
  if (s.timers.length) out.push(`${want.id}: timers left: ${JSON.stringify(s.timers)}`);
  if (s.wakeAt !== null) out.push(`${want.id}: wakeAt ${s.wakeAt} on a final snapshot`);
  const compensated = Object.entries(s.steps)
    .filter(([, st]) => st.status === 'compensated')
    .map(([step]) => step)
    .sort();
  if (compensated.join() !== [...want.compensated].sort().join())
    out.push(`${want.id}: compensated [${compensated}], designed [${want.compensated}]`);
  if (effects.join() !== [...want.effects].sort().join())
    out.push(`${want.id}: effects [${effects}], designed [${[...want.effects].sort()}]`);
  for (const e of effects) {
    const [phase, step] = e.split(':');
    if (phase === 'compensate' && !effects.includes(`run:${step}`))
      out.push(`${want.id}: ${step} undone but never done`);
  }
  return out;
}
