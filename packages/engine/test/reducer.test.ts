import { backoffMs, createHarness, DEFAULT_RETRY, step, workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { approvalWorkflow, orderWorkflow } from './fixtures.js';

describe('reducer: tasks', () => {
  it('start dispatches the first task with attempt, idempotency key, deadline and lease', () => {
    const h = createHarness(orderWorkflow, { id: 'o-1', now: 1000 }).start({ amount: 5 });
    expect(h.status).toBe('running');
    expect(h.snapshot.version).toBe(1);
    const [t] = h.dispatched();
    expect(t).toMatchObject({
      step: 'reserve',
      attempt: 1,
      idempotencyKey: 'o-1/1/reserve/1',
      deadline: 31_000,
      dispatchVersion: 1,
      leaseUntil: 11_000,
    });
    // Due when the lease would lapse (its runner renews it while it runs), before the deadline.
    expect(h.snapshot.wakeAt).toBe(11_000);
  });

  it('a completion records the output and dispatches the next step in the same write', () => {
    const h = createHarness(orderWorkflow).start({ amount: 5 });
    h.complete('reserve', { reservation: 'r1' });
    expect(h.snapshot.version).toBe(2);
    expect(h.output('reserve')).toEqual({ reservation: 'r1' });
    expect(h.dispatched().map((t) => [t.step, t.dispatchVersion, t.input])).toEqual([
      ['charge', 2, { amount: 5 }],
    ]);
  });

  it('retries with exponential backoff and deterministic jitter, then continues', () => {
    const h = createHarness(orderWorkflow, { id: 'o-2' }).start({ amount: 5 });
    h.complete('reserve');
    h.fail('charge', { message: 'declined', code: 'CARD' });
    const policy = {
      ...DEFAULT_RETRY,
      maxAttempts: 3,
      initialMs: 1000,
      factor: 2,
      maxMs: 10_000,
      jitter: 0.2,
    };
    const d1 = backoffMs(policy, 'o-2', 'charge', 1);
    expect(d1).toBeGreaterThanOrEqual(800);
    expect(d1).toBeLessThanOrEqual(1200);
    expect(h.snapshot.timers).toEqual([{ kind: 'retry', step: 'charge', phase: 'run', at: d1 }]);
    expect(h.status).toBe('waiting');
    expect(h.advance(d1 - 1)).toBe(false); // not due yet: same object
    expect(h.advance(1)).toBe(true);
    expect(h.dispatched('charge')[0]).toMatchObject({ attempt: 2, idempotencyKey: 'o-2/1/charge/1' });
    h.fail('charge', 'declined again');
    const d2 = backoffMs(policy, 'o-2', 'charge', 2);
    expect(d2).toBeGreaterThanOrEqual(1600);
    expect(d2).toBeLessThanOrEqual(2400);
    h.advance(d2);
    h.complete('charge', { paid: true });
    expect(h.dispatched()[0]?.step).toBe('email');
    h.complete('email');
    expect(h.status).toBe('completed');
    expect(h.snapshot.wakeAt).toBeNull();
  });

  it('a non-retryable error or code skips the remaining attempts', () => {
    const wf = workflow('nr', 1, { onFailure: 'fail' })
      .task('a', { handler: 'a', retry: { maxAttempts: 5, nonRetryable: ['INVALID'] } })
      .build();
    const h = createHarness(wf).start();
    h.fail('a', { message: 'bad', code: 'INVALID' });
    expect(h.status).toBe('failed');
    expect(h.snapshot.error).toEqual({ message: 'bad', code: 'INVALID', step: 'a' });
    const h2 = createHarness(wf).start();
    h2.fail('a', { message: 'bad', retryable: false });
    expect(h2.status).toBe('failed');
  });

  it('a missed deadline re-dispatches with the same idempotency key and the next attempt', () => {
    const h = createHarness(orderWorkflow, { id: 'o-3' }).start({ amount: 1 });
    const first = h.dispatched()[0]!;
    h.now = first.deadline;
    expect(h.send({ type: 'tick' })).toBe(true);
    const again = h.dispatched()[0]!;
    expect(again).toMatchObject({ step: 'reserve', attempt: 2, idempotencyKey: first.idempotencyKey });
    // The zombie's late result for attempt 1 is ignored: the same object comes back.
    const before = h.snapshot;
    expect(
      step(orderWorkflow, before, { type: 'task.completed', at: h.now, step: 'reserve', attempt: 1 }),
    ).toBe(before);
    h.complete('reserve');
    expect(h.dispatched()[0]?.step).toBe('charge');
  });

  it('returns the same object for events that do not apply', () => {
    const h = createHarness(orderWorkflow).start({ amount: 1 });
    const s = h.snapshot;
    expect(step(orderWorkflow, s, { type: 'tick', at: 10 })).toBe(s);
    h.complete('reserve');
    const s2 = h.snapshot;
    expect(step(orderWorkflow, s2, { type: 'task.completed', at: 20, step: 'reserve', attempt: 1 })).toBe(s2);
    expect(step(orderWorkflow, s2, { type: 'requeue', at: 20 })).toBe(s2);
    h.complete('charge');
    h.complete('email');
    const done = h.snapshot;
    for (const e of [
      { type: 'tick', at: 1e9 },
      { type: 'cancel', at: 1e9 },
      { type: 'abort', at: 1e9 },
    ] as const) {
      expect(step(orderWorkflow, done, e)).toBe(done);
    }
    // A signal no step listens for is refused even once finished, as while active (nothing written).
    expect(() => step(orderWorkflow, done, { type: 'signal', at: 1e9, name: 'x' })).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_SIGNAL' }),
    );
  });
});

describe('reducer: timers and signals', () => {
  it('wait consumes a signal, sleep is a durable timer, wakeAt is the earliest', () => {
    const h = createHarness(approvalWorkflow, { now: 100 }).start();
    h.complete('draft');
    expect(h.status).toBe('waiting');
    expect(h.snapshot.wakeAt).toBe(100 + 60_000);
    h.now = 200;
    h.signal('approved', { by: 'ann' });
    expect(h.output('approve')).toEqual({ by: 'ann' });
    expect(h.snapshot.timers).toEqual([{ kind: 'sleep', step: 'cool', at: 5200 }]);
    expect(h.snapshot.wakeAt).toBe(5200);
    h.advance(4999);
    expect(h.snapshot.steps.cool?.status).toBe('active');
    h.advance(1);
    expect(h.dispatched()[0]?.step).toBe('ship');
  });

  it('a wait timeout takes onTimeout; without onTimeout it fails', () => {
    const h = createHarness(approvalWorkflow).start();
    h.complete('draft');
    h.advance(60_000);
    expect(h.snapshot.steps.approve?.output).toEqual({ timedOut: true });
    expect(h.dispatched()[0]?.step).toBe('expire');

    const strict = workflow('strict', 1, { onFailure: 'fail' })
      .wait('w', { signal: 's', timeoutMs: 10 })
      .build();
    const h2 = createHarness(strict).start();
    h2.advance(10);
    expect(h2.status).toBe('failed');
    expect(h2.snapshot.error?.code).toBe('TIMEOUT');
  });

  it('buffers signals that arrive early and deduplicates by signal id', () => {
    const h = createHarness(approvalWorkflow).start();
    expect(h.signal('approved', { n: 1 }, 'sig-1')).toBe(true);
    expect(h.signal('approved', { n: 1 }, 'sig-1')).toBe(false);
    expect(h.snapshot.inbox).toHaveLength(1);
    h.complete('draft');
    expect(h.snapshot.inbox).toHaveLength(0);
    expect(h.output('approve')).toEqual({ n: 1 });
  });

  it('bounds the inbox with a typed overflow error and writes nothing', () => {
    const wf = workflow('tiny', 1, { limits: { inbox: 2 }, acceptUnknownSignals: true })
      .wait('w', { signal: 'go' })
      .build();
    const h = createHarness(wf).start();
    h.signal('other', 1);
    h.signal('other', 2);
    const before = h.snapshot;
    expect(() => h.signal('other', 3)).toThrow(expect.objectContaining({ code: 'INBOX_OVERFLOW' }));
    expect(h.snapshot).toBe(before);
    expect(h.signal('go', 'ok')).toBe(true);
    expect(h.status).toBe('completed');
  });

  it('choice picks the first branch whose condition holds', () => {
    const wf = workflow('route', 1)
      .choice('route', {
        branches: [
          { when: { '>': [{ var: 'input.amount' }, 100] }, next: 'big' },
          { when: { in: [{ var: 'input.country' }, ['DE', 'FR']] }, next: 'eu' },
        ],
        otherwise: 'small',
      })
      .succeed('big', { output: 'input.amount' })
      .succeed('eu', { output: 'input.country' })
      .succeed('small')
      .build();
    expect(createHarness(wf).start({ amount: 500 }).snapshot.output).toBe(500);
    expect(createHarness(wf).start({ amount: 5, country: 'FR' }).snapshot.output).toBe('FR');
    const small = createHarness(wf).start({ amount: 5, country: 'US' });
    expect(small.status).toBe('completed');
    expect(small.snapshot.steps.small?.status).toBe('completed');
  });

  it('abort stops at once without compensation and ignores late results', () => {
    const h = createHarness(orderWorkflow).start({ amount: 1 });
    h.complete('reserve');
    const attempt = h.dispatched()[0]!.attempt;
    h.abort('operator');
    expect(h.status).toBe('aborted');
    expect(h.snapshot.reason).toBe('operator');
    expect(h.snapshot.tasks).toEqual({});
    expect(h.send({ type: 'task.completed', step: 'charge', attempt })).toBe(false);
  });

  it('cancel compensates completed steps, then ends cancelled', () => {
    const h = createHarness(orderWorkflow).start({ amount: 1 });
    h.complete('reserve');
    h.cancel('customer');
    expect(h.status).toBe('compensating');
    expect(h.dispatched().map((t) => [t.step, t.phase])).toEqual([['reserve', 'compensate']]);
    h.compensate('reserve');
    // the charge handler was detached: the instance waits for it before finishing
    expect(h.status).toBe('compensating');
    h.fail('charge', 'aborted');
    expect(h.status).toBe('cancelled');
    expect(h.snapshot.steps.reserve?.status).toBe('compensated');
  });

  it('a runaway event is stopped by the transition bound with a clear failure', () => {
    const wf = workflow('chain', 1)
      .savepoint('a')
      .savepoint('b')
      .savepoint('c')
      .savepoint('d')
      .savepoint('e')
      .succeed('f')
      .build();
    expect(createHarness(wf).start().status).toBe('completed');
    const h = createHarness(wf, { maxTransitions: 3 }).start();
    expect(h.status).toBe('failed');
    expect(h.snapshot.error?.code).toBe('TRANSITION_LIMIT');
  });

  it('replay of the recorded events reproduces the snapshot', () => {
    const h = createHarness(approvalWorkflow).start({ x: 1 });
    h.signal('approved', 'early', 's1');
    h.complete('draft', { d: 1 });
    h.advance(5000);
    h.complete('ship');
    expect(h.status).toBe('completed');
    expect(JSON.stringify(h.replayed())).toBe(JSON.stringify(h.snapshot));
  });

  it('keeps top-level keys it does not know, and writes its own in a fixed order', () => {
    const s = createHarness(orderWorkflow, { id: 'o-1', now: 1000 }).start({ amount: 5 }).snapshot;
    const ev = {
      type: 'task.failed',
      at: 2000,
      step: 'reserve',
      attempt: 1,
      error: { message: 'no' },
    } as const;
    // A store may add a field of its own; the snapshot's fields may come back in any order.
    const stored = { ...JSON.parse(JSON.stringify(s)), tenant: 't-1' };
    expect((step(orderWorkflow, stored, ev) as unknown as { tenant: string }).tenant).toBe('t-1');
    const reversed = Object.fromEntries(Object.entries(JSON.parse(JSON.stringify(s))).reverse());
    const live = step(orderWorkflow, s, ev);
    expect(JSON.stringify(step(orderWorkflow, reversed as never, ev))).toBe(JSON.stringify(live));
    expect(Object.keys(live).slice(0, 8)).toEqual([
      'schemaVersion',
      'id',
      'workflow',
      'version',
      'run',
      'status',
      'input',
      'steps',
    ]);
  });
});
