import { createHarness, step, taskView, workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import {
  compensated,
  compensationDispatches,
  compensationOrder,
  expectSettled,
  statuses,
} from './saga-helpers.js';

const LOG = { log: 1000 };
const HOUR = 3_600_000;

describe('order saga', () => {
  const order = workflow('order', 1, {
    limits: LOG,
    defaults: { retry: { maxAttempts: 3, initialMs: 1000, factor: 2, maxMs: 10_000, jitter: 0 } },
  })
    .task('reserve', { handler: 'reserveStock', compensate: 'releaseStock' })
    .task('charge', { handler: 'chargeCard', compensate: 'refund' })
    .task('email', { handler: 'sendEmail', compensate: 'unsend' })
    .build();

  it('charge fails after 3 attempts: the reservation is released, failed with the reason kept', () => {
    const h = createHarness(order, { id: 'o-1' }).start({ amount: 10 });
    h.complete('reserve', { reservation: 'R1' });
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect(h.dispatched('charge')[0]?.attempt).toBe(attempt);
      h.fail('charge', { message: 'card declined', code: 'DECLINED' });
      if (attempt < 3) h.advanceToWake();
    }
    expect(h.status).toBe('compensating');
    expect(h.dispatched().map((t) => [t.step, t.phase, t.handler])).toEqual([
      ['reserve', 'compensate', 'releaseStock'],
    ]);
    // The compensation gets the reservation's idempotency key and can read its output.
    expect(h.dispatched()[0]).toMatchObject({ idempotencyKey: 'o-1/1/reserve/1' });
    const view = taskView(order, h.snapshot, h.dispatched()[0]!);
    expect(view.outputs).toEqual({ reserve: { reservation: 'R1' } });
    h.compensate('reserve');
    expect(h.status).toBe('failed');
    expect(h.snapshot.error).toEqual({ message: 'card declined', code: 'DECLINED', step: 'charge' });
    expect(statuses(h.snapshot, ['reserve', 'charge', 'email'])).toEqual({
      reserve: 'compensated',
      charge: 'failed',
      email: undefined,
    });
    expect(compensated(h)).toEqual({ reserve: 1 });
    expect(compensationDispatches(h.snapshot)).toEqual({ reserve: 1 });
    expectSettled(h);
  });

  it('with the synchronous handlers of the harness', () => {
    const h = createHarness(order).start({ amount: 10 });
    const calls: string[] = [];
    const handlers = {
      reserveStock: () => {
        calls.push('reserve');
        return { r: 1 };
      },
      releaseStock: () => {
        calls.push('release');
        return null;
      },
      chargeCard: () => {
        calls.push('charge');
        throw new Error('declined');
      },
    };
    h.runHandlers(handlers);
    while (h.advanceToWake()) h.runHandlers(handlers);
    expect(h.status).toBe('failed');
    expect(calls).toEqual(['reserve', 'charge', 'charge', 'charge', 'release']);
    expectSettled(h);
  });
});

describe('seller registration, forward recovery', () => {
  const registration = (maxAttempts: number) =>
    workflow('seller', 1, {
      limits: LOG,
      defaults: { retry: { maxAttempts, initialMs: 500, factor: 2, maxMs: 5_000, jitter: 0.1 } },
    })
      .task('saveForm', { handler: 'saveForm', compensate: 'deleteForm', pivot: true })
      .task('createCompany', { handler: 'createCompany', compensate: 'deleteCompany' })
      .task('attachUser', { handler: 'attachUser', compensate: 'detachUser' })
      .task('securityCheck', { handler: 'securityCheck' })
      .task('notify', { handler: 'notify' })
      .build();

  /** The security service fails its first `failures` calls, then succeeds. */
  function drive(h: ReturnType<typeof createHarness>, failures: number) {
    let calls = 0;
    const handlers = {
      saveForm: () => ({ formId: 'F1' }),
      createCompany: () => ({ companyId: 'C1' }),
      attachUser: () => ({ ok: true }),
      notify: () => ({ sent: true }),
      securityCheck: () => {
        if (++calls <= failures) throw Object.assign(new Error('service unavailable'), { code: 'FLAKY' });
        return { passed: true };
      },
    };
    h.runHandlers(handlers);
    while (h.status === 'waiting' || h.status === 'running') {
      if (!h.advanceToWake()) break;
      h.runHandlers(handlers);
    }
    return { handlers, calls: () => calls };
  }

  it('a flaky service failing 5 times then succeeding rolls nothing back', () => {
    const h = createHarness(registration(6)).start({ seller: 's-1' });
    const { calls } = drive(h, 5);
    expect(h.status).toBe('completed');
    expect(calls()).toBe(6);
    expect(h.snapshot.steps.securityCheck?.attempt).toBe(6);
    expect(compensationDispatches(h.snapshot)).toEqual({});
    expectSettled(h);
  });

  it('after maxAttempts it lands in dlq without rollback; requeue finishes it', () => {
    const h = createHarness(registration(3)).start({ seller: 's-2' });
    const { handlers, calls } = drive(h, 5);
    expect(h.status).toBe('dlq');
    expect(calls()).toBe(3);
    expect(h.snapshot.steps.securityCheck).toMatchObject({ status: 'dlq', attempt: 3 });
    expect(h.snapshot.error).toMatchObject({ step: 'securityCheck', code: 'FLAKY' });
    expect(statuses(h.snapshot, ['saveForm', 'createCompany', 'attachUser'])).toEqual({
      saveForm: 'completed',
      createCompany: 'completed',
      attachUser: 'completed',
    });
    expect(h.snapshot.tasks).toEqual({});
    expect(h.snapshot.wakeAt).toBeNull();
    // Nothing but requeue (or cancel/abort) moves it.
    expect(h.advance(HOUR)).toBe(false);

    expect(h.requeue()).toBe(true);
    expect(h.dispatched('securityCheck')[0]).toMatchObject({ attempt: 4 });
    // Fresh attempts: calls 4 and 5 fail and are retried, call 6 (attempt 6) succeeds.
    h.runHandlers(handlers);
    expect(h.status).toBe('waiting');
    while (h.advanceToWake()) h.runHandlers(handlers);
    expect(calls()).toBe(6);
    expect(h.snapshot.steps.securityCheck?.attempt).toBe(6);
    expect(h.status).toBe('completed');
    expect(h.snapshot.error).toBeUndefined();
    expect(compensationDispatches(h.snapshot)).toEqual({});
    expectSettled(h);
  });

  it('a non-retryable error after the pivot also goes to dlq instead of rolling back', () => {
    const h = createHarness(registration(5)).start();
    h.complete('saveForm');
    h.complete('createCompany');
    h.fail('attachUser', { message: 'no such user', retryable: false });
    expect(h.status).toBe('dlq');
    expect(h.snapshot.steps.createCompany?.status).toBe('completed');
    expect(h.requeue({ step: 'attachUser', inputPatch: { user: 'u-2' } })).toBe(true);
    expect(h.dispatched('attachUser')[0]?.input).toEqual({ user: 'u-2' });
  });

  it('before the pivot has completed a failure still rolls back', () => {
    const wf = workflow('pre-pivot', 1, { limits: LOG })
      .task('a', { handler: 'a', compensate: 'undoA' })
      .task('save', { handler: 'save', pivot: true, retry: { maxAttempts: 1 } })
      .task('b', { handler: 'b' })
      .build();
    const h = createHarness(wf).start();
    h.complete('a');
    h.fail('save', 'db down');
    expect(h.status).toBe('compensating');
    h.compensate('a');
    expect(h.status).toBe('failed');
    expectSettled(h);
  });
});

describe('savepoint', () => {
  const wf = workflow('sp', 1, { limits: LOG, defaults: { retry: { maxAttempts: 1 } } })
    .task('A', { handler: 'a', compensate: 'undoA' })
    .savepoint('sp')
    .task('B', { handler: 'b', compensate: 'undoB' })
    .task('C', { handler: 'c', compensate: 'undoC' })
    .build();

  it('C fails: only B (after the savepoint) is compensated', () => {
    const h = createHarness(wf).start();
    h.complete('A');
    h.complete('B');
    h.fail('C', 'boom');
    expect(h.dispatched().map((t) => `${t.step}:${t.phase}`)).toEqual(['B:compensate']);
    h.compensate('B');
    expect(h.status).toBe('failed');
    expect(statuses(h.snapshot, ['A', 'sp', 'B', 'C'])).toEqual({
      A: 'completed',
      sp: 'completed',
      B: 'compensated',
      C: 'failed',
    });
    expect(compensated(h)).toEqual({ B: 1 });
    expectSettled(h);
  });

  it('cancel instead compensates B and A, latest first, past the savepoint', () => {
    const h = createHarness(wf).start();
    h.complete('A');
    h.complete('B');
    h.cancel('customer changed their mind');
    expect(h.status).toBe('compensating');
    h.compensate('B');
    h.compensate('A');
    // C's handler was detached; the instance waits for it.
    expect(h.status).toBe('compensating');
    h.fail('C', 'aborted by signal');
    expect(h.status).toBe('cancelled');
    expect(h.snapshot.reason).toBe('customer changed their mind');
    expect(compensationOrder(h.snapshot)).toEqual(['B', 'A']);
    expect(compensated(h)).toEqual({ A: 1, B: 1 });
    expectSettled(h);
  });

  it('a cancel during the rollback of a failure widens it past the savepoint', () => {
    const h = createHarness(wf).start();
    h.complete('A');
    h.complete('B');
    h.fail('C', 'boom');
    h.cancel();
    h.compensate('B');
    h.compensate('A');
    expect(h.status).toBe('cancelled');
    expect(compensated(h)).toEqual({ A: 1, B: 1 });
    expectSettled(h);
  });
});

describe('human approval', () => {
  const wf = workflow('publish', 1, { limits: LOG })
    .task('draft', { handler: 'draft', compensate: 'discardDraft' })
    .human('review', { timeoutMs: 48 * HOUR, onTimeout: 'escalate' })
    .task('publish', { handler: 'publish', end: true })
    .task('escalate', { handler: 'escalate' })
    .build();

  it('approve continues to publish', () => {
    const h = createHarness(wf).start();
    h.complete('draft');
    expect(h.status).toBe('waiting');
    h.signal('review', { decision: 'approve', by: 'ed' });
    h.complete('publish');
    expect(h.status).toBe('completed');
    expect(h.snapshot.steps.review?.output).toEqual({ decision: 'approve', by: 'ed' });
    expectSettled(h);
  });

  it('reject fails the workflow, compensating the draft', () => {
    const h = createHarness(wf).start();
    h.complete('draft');
    h.signal('review', { decision: 'reject', reason: 'typos' });
    expect(h.dispatched().map((t) => `${t.step}:${t.phase}`)).toEqual(['draft:compensate']);
    h.compensate('draft');
    expect(h.status).toBe('failed');
    expect(h.snapshot.error).toMatchObject({ code: 'REJECTED', step: 'review' });
    expect(compensated(h)).toEqual({ draft: 1 });
    expectSettled(h);
  });

  it('after 48 h on a simulated clock the timeout branch is taken', () => {
    const t0 = Date.UTC(2026, 0, 1);
    const h = createHarness(wf, { now: t0 }).start();
    h.complete('draft');
    expect(h.snapshot.wakeAt).toBe(t0 + 48 * HOUR);
    expect(h.advance(48 * HOUR - 1)).toBe(false);
    expect(h.advance(1)).toBe(true);
    expect(h.snapshot.steps.review).toMatchObject({ status: 'completed', output: { timedOut: true } });
    expect(h.dispatched().map((t) => t.step)).toEqual(['escalate']);
    // A decision after the timeout has no listener: it is only buffered.
    h.signal('review', { decision: 'approve' });
    expect(h.snapshot.steps.publish).toBeUndefined();
    h.complete('escalate');
    expect(h.status).toBe('completed');
    expect(h.snapshot.steps.publish).toBeUndefined();
  });

  it('a buffered decision without approve/reject does not approve the step', () => {
    const h = createHarness(wf).start();
    h.signal('review', { hello: 'world' } as never); // nobody listens yet: buffered (the compiler refuses it)
    h.complete('draft');
    expect(h.snapshot.steps.review?.status).toBe('active');
    expect(h.snapshot.steps.publish).toBeUndefined();
    h.signal('review', { decision: 'approve' });
    expect(h.dispatched().map((t) => t.step)).toEqual(['publish']);
  });
});

describe('a compensation exhausts its retries', () => {
  const wf = workflow('comp-dlq', 1, { limits: LOG, defaults: { retry: { maxAttempts: 2, initialMs: 100 } } })
    .task('A', { handler: 'a', compensate: 'undoA' })
    .task('B', { handler: 'b', compensate: 'undoB' })
    .task('C', { handler: 'c' })
    .build();

  it('dlq with both errors; requeue completes the rollback with fresh attempts', () => {
    const h = createHarness(wf).start();
    h.complete('A');
    h.complete('B');
    h.fail('C', { message: 'boom', code: 'C_FAILED', retryable: false });
    h.compensate('B');
    h.fail('A', { message: 'refund service down', code: 'DOWN' }, { phase: 'compensate' });
    expect(h.status).toBe('compensating');
    h.advanceToWake();
    expect(h.dispatched('A')[0]).toMatchObject({ phase: 'compensate', attempt: 2 });
    h.fail('A', { message: 'refund service down', code: 'DOWN' }, { phase: 'compensate' });
    expect(h.status).toBe('dlq');
    expect(h.snapshot.error).toEqual({ message: 'boom', code: 'C_FAILED', retryable: false, step: 'C' });
    expect(h.snapshot.compensationError).toEqual({ message: 'refund service down', code: 'DOWN', step: 'A' });
    expect(h.snapshot.steps.A?.status).toBe('compensation-dlq');
    expect(h.snapshot.tasks).toEqual({});
    expect(h.advance(HOUR)).toBe(false);

    expect(h.requeue()).toBe(true);
    expect(h.status).toBe('compensating');
    expect(h.dispatched('A')[0]).toMatchObject({ phase: 'compensate', attempt: 3 });
    h.fail('A', 'still down', { phase: 'compensate' }); // fresh attempts after requeue: retried
    h.advanceToWake();
    h.compensate('A');
    expect(h.status).toBe('failed');
    expect(h.snapshot.error?.step).toBe('C');
    expect(compensated(h)).toEqual({ A: 1, B: 1 });
    expectSettled(h);
  });

  it('a cancel while a compensation sits in dlq retries it and ends cancelled', () => {
    const h = createHarness(wf).start();
    h.complete('A');
    h.complete('B');
    h.fail('C', { message: 'boom', retryable: false });
    h.fail('B', { message: 'down', retryable: false }, { phase: 'compensate' });
    expect(h.status).toBe('dlq');
    h.cancel();
    expect(h.status).toBe('compensating');
    expect(h.dispatched().map((t) => `${t.step}:${t.phase}`)).toEqual(['B:compensate']);
    h.compensate('B');
    h.compensate('A');
    expect(h.status).toBe('cancelled');
    expect(h.snapshot.compensationError).toBeUndefined();
    expect(compensationOrder(h.snapshot)).toEqual(['B', 'A']);
    expect(compensated(h)).toEqual({ A: 1, B: 1 });
    expectSettled(h);
  });
});

describe('a zombie runner', () => {
  const wf = workflow('zombie', 1, { limits: LOG })
    .task('charge', { handler: 'charge', timeoutMs: 30_000, compensate: 'refund' })
    .task('ship', { handler: 'ship' })
    .build();

  it('after the lease expires the task is re-dispatched; the late result of the old attempt is ignored', () => {
    const h = createHarness(wf, { id: 'z-1' }).start();
    const first = h.dispatched('charge')[0]!;
    expect(first).toMatchObject({ attempt: 1, deadline: 30_000 });
    h.now = first.deadline;
    expect(h.send({ type: 'tick' })).toBe(true);
    const second = h.dispatched('charge')[0]!;
    expect(second.attempt).toBe(2);
    expect(second.idempotencyKey).toBe(first.idempotencyKey);
    expect(h.snapshot.steps.charge?.error).toMatchObject({ code: 'TIMEOUT' });

    const before = h.snapshot;
    const late = {
      type: 'task.completed',
      at: h.now + 1,
      step: 'charge',
      attempt: 1,
      output: 'zombie',
    } as const;
    expect(step(wf, before, late)).toBe(before);
    expect(h.fail('charge', 'zombie failed', { attempt: 1 })).toBe(false);
    expect(h.snapshot).toBe(before);

    h.complete('charge', { chargeId: 'ch-2' });
    expect(h.output('charge')).toEqual({ chargeId: 'ch-2' });
    // After the step moved on, the zombie's result is still ignored.
    const after = h.snapshot;
    expect(step(wf, after, late)).toBe(after);
    h.complete('ship');
    expect(h.status).toBe('completed');
    expectSettled(h);
  });
});
