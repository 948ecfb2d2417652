import { createHarness, workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { compensated, compensationDispatches, compensationOrder, expectSettled } from './saga-helpers.js';

const LOG = { log: 1000 };
const once = { retry: { maxAttempts: 1 } };

describe('parallel rollback', () => {
  const wf = workflow('fork', 1, { limits: LOG, defaults: once })
    .task('order', { handler: 'order', compensate: 'cancelOrder' })
    .parallel('fork', { branches: ['stock', 'payment'], join: 'all' })
    .task('ship', { handler: 'ship', end: true })
    .task('stock', { handler: 'reserve', compensate: 'release', end: true })
    .task('payment', { handler: 'charge', compensate: 'refund', end: true })
    .build();

  it("payment fails while stock is running: stock's late success is compensated, nothing twice", () => {
    const h = createHarness(wf).start();
    h.complete('order');
    expect(h.dispatched().map((t) => t.step)).toEqual(['stock', 'payment']);
    h.fail('payment', 'card declined');
    // Reverse order: order is compensated now; stock is detached, not yet known to have happened.
    expect(h.dispatched().map((t) => `${t.step}:${t.phase}`)).toEqual(['order:compensate']);
    expect(h.snapshot.tasks.stock?.detached).toBe(true);
    h.compensate('order');
    expect(h.status).toBe('compensating'); // waits for the detached stock handler
    h.complete('stock', { reservation: 'R1' });
    expect(h.dispatched().map((t) => `${t.step}:${t.phase}`)).toEqual(['stock:compensate']);
    h.compensate('stock');
    expect(h.status).toBe('failed');
    expect(h.snapshot.steps.payment?.status).toBe('failed');
    expect(h.snapshot.steps.ship).toBeUndefined();
    expect(compensated(h)).toEqual({ order: 1, stock: 1 });
    expect(compensationDispatches(h.snapshot)).toEqual({ order: 1, stock: 1 });
    expectSettled(h);
  });

  it('a late result arriving while another compensation runs is queued, not lost', () => {
    const h = createHarness(wf).start();
    h.complete('order');
    h.fail('payment', 'declined');
    h.complete('stock'); // order's compensation is still in flight
    h.compensate('order');
    h.compensate('stock');
    expect(h.status).toBe('failed');
    expect(compensationOrder(h.snapshot)).toEqual(['order', 'stock']);
    expect(compensated(h)).toEqual({ order: 1, stock: 1 });
    expectSettled(h);
  });

  it('stock completed before payment failed: compensated once, latest first', () => {
    const h = createHarness(wf).start();
    h.complete('order');
    h.complete('stock');
    h.fail('payment', 'declined');
    h.compensate('stock');
    h.compensate('order');
    expect(compensationOrder(h.snapshot)).toEqual(['stock', 'order']);
    expect(compensated(h)).toEqual({ order: 1, stock: 1 });
    expect(h.status).toBe('failed');
    expectSettled(h);
  });

  it('a detached handler that fails or times out is not compensated', () => {
    const h = createHarness(wf).start();
    h.complete('order');
    h.fail('payment', 'declined');
    h.compensate('order');
    h.advance(300_000); // stock's deadline passes
    expect(h.status).toBe('failed');
    expect(compensated(h)).toEqual({ order: 1 });
    expectSettled(h);
  });

  it('a branch that ends the workflow while forking leaves later branches undispatched', () => {
    const wf2 = workflow('fork-fail', 1, { limits: LOG, onFailure: 'fail' })
      .parallel('fork', { branches: ['stop', 'late'] })
      .succeed('done')
      .fail('stop', { error: { message: 'no', code: 'NO' } })
      .task('late', { handler: 'late', end: true })
      .build();
    const h = createHarness(wf2).start();
    expect(h.status).toBe('failed');
    expect(h.snapshot.steps.late).toBeUndefined();
    expectSettled(h);
  });

  it('preventive: undispatched steps of sibling branches are skipped', () => {
    const seq = workflow('fork-seq', 1, { limits: LOG, defaults: once })
      .parallel('fork', { branches: ['a1', 'b1'] })
      .succeed('done')
      .task('a1', { handler: 'a', compensate: 'undoA' })
      .task('a2', { handler: 'a', compensate: 'undoA', end: true })
      .task('b1', { handler: 'b', compensate: 'undoB' })
      .sleep('b-wait', { ms: 1000 })
      .task('b2', { handler: 'b', compensate: 'undoB', end: true })
      .build();
    const h = createHarness(seq).start();
    h.complete('b1');
    h.fail('a1', 'boom');
    h.compensate('b1');
    expect(h.status).toBe('failed');
    expect(h.snapshot.steps['b-wait']?.status).toBe('skipped');
    expect(h.snapshot.steps.a2).toBeUndefined();
    expect(h.snapshot.steps.b2).toBeUndefined();
    expect(h.advance(5000)).toBe(false);
    expectSettled(h);
  });
});

describe('nested parallel blocks', () => {
  // A → savepoint → outer[ X → inner[ Y , Z → deep[ P , Q ] ] , W ] → end
  const wf = workflow('nested', 1, { limits: LOG, defaults: once })
    .task('A', { handler: 'h', compensate: 'c' })
    .savepoint('sp')
    .parallel('outer', { branches: ['X', 'W'] })
    .succeed('done')
    .task('X', { handler: 'h', compensate: 'c' })
    .parallel('inner', { branches: ['Y', 'Z'], end: true })
    .task('Y', { handler: 'h', compensate: 'c', end: true })
    .task('Z', { handler: 'h', compensate: 'c' })
    .parallel('deep', { branches: ['P', 'Q'], end: true })
    .task('P', { handler: 'h', compensate: 'c', end: true })
    .task('Q', { handler: 'h', compensate: 'c', end: true })
    .task('W', { handler: 'h', compensate: 'c', end: true })
    .build();

  it('two levels: a failure in the inner block compensates every completed step after the savepoint', () => {
    const h = createHarness(wf).start();
    h.complete('A');
    h.complete('W');
    h.complete('X');
    h.complete('Z');
    h.fail('Y', 'boom'); // P and Q are in flight
    expect(h.snapshot.tasks.P?.detached && h.snapshot.tasks.Q?.detached).toBe(true);
    h.compensate('Z');
    h.complete('P'); // late success while X's compensation runs: queued ahead of W
    h.fail('Q', 'aborted');
    while (h.dispatched().length) h.compensate(h.dispatched()[0]!.step);
    expect(h.status).toBe('failed');
    expect(compensated(h)).toEqual({ W: 1, X: 1, Z: 1, P: 1 });
    expect(compensationOrder(h.snapshot)).toEqual(['Z', 'X', 'P', 'W']);
    expect(h.snapshot.steps.A?.status).toBe('completed');
    expectSettled(h);
  });

  it('three levels: a failure deep inside rolls back across all branches, once each', () => {
    const h = createHarness(wf).start();
    h.complete('A');
    h.complete('X');
    h.complete('Y');
    h.complete('Z');
    h.complete('P');
    h.fail('Q', 'boom'); // W still in flight
    const order: string[] = [];
    for (let i = 0; i < 10 && h.status === 'compensating'; i++) {
      const [next] = h.dispatched();
      if (next) {
        order.push(next.step);
        h.compensate(next.step);
      } else h.complete('W', 'late');
    }
    expect(h.status).toBe('failed');
    expect(order).toEqual(['P', 'Z', 'Y', 'X', 'W']);
    expect(compensated(h)).toEqual({ P: 1, Z: 1, Y: 1, X: 1, W: 1 });
    expectSettled(h);
  });

  it('a cancel goes past the savepoint and compensates A too', () => {
    const h = createHarness(wf).start();
    h.complete('A');
    h.complete('X');
    h.complete('W');
    h.cancel();
    h.complete('Y');
    h.complete('Z'); // detached: the deep block was never entered
    while (h.dispatched().length) h.compensate(h.dispatched()[0]!.step);
    expect(h.status).toBe('cancelled');
    expect(compensated(h)).toEqual({ A: 1, X: 1, W: 1, Y: 1, Z: 1 });
    expect(h.snapshot.steps.deep).toBeUndefined();
    expectSettled(h);
  });

  it('a savepoint inside a sibling branch does not cut the rollback of another branch short', () => {
    const sib = workflow('sibling-sp', 1, { limits: LOG, defaults: once })
      .parallel('fork', { branches: ['a1', 'b1'] })
      .succeed('done')
      .task('a1', { handler: 'h', compensate: 'c' })
      .sleep('a-wait', { ms: 10 })
      .task('a2', { handler: 'h', compensate: 'c', end: true })
      .task('b1', { handler: 'h', compensate: 'c' })
      .savepoint('b-sp')
      .task('b2', { handler: 'h', compensate: 'c', end: true })
      .build();
    const h = createHarness(sib).start();
    h.complete('a1');
    h.complete('b1'); // passes b-sp
    h.complete('b2');
    h.advance(10);
    h.fail('a2', 'boom');
    while (h.dispatched().length) h.compensate(h.dispatched()[0]!.step);
    expect(h.status).toBe('failed');
    // b-sp does not enclose a2: everything is compensated, latest first.
    expect(compensationOrder(h.snapshot)).toEqual(['b2', 'b1', 'a1']);

    // A failure after the savepoint in its own branch stops there.
    const h2 = createHarness(sib).start();
    h2.complete('a1');
    h2.complete('b1');
    h2.fail('b2', 'boom');
    while (h2.dispatched().length) h2.compensate(h2.dispatched()[0]!.step);
    expect(compensationOrder(h2.snapshot)).toEqual([]);
    expect(h2.status).toBe('failed');
    expectSettled(h2);
  });
});

describe('a choice inside a parallel branch', () => {
  const wf = workflow('choice-in-branch', 1, { limits: LOG, defaults: once })
    .parallel('fork', { branches: ['route', 'other'] })
    .succeed('done')
    .choice('route', {
      branches: [{ when: { '==': [{ var: 'input.express' }, true] }, next: 'express' }],
      otherwise: 'standard',
    })
    .task('express', { handler: 'express', compensate: 'undoExpress' })
    .task('express2', { handler: 'express', compensate: 'undoExpress', end: true })
    .task('standard', { handler: 'standard', compensate: 'undoStandard', end: true })
    .task('other', { handler: 'other', compensate: 'undoOther', end: true })
    .build();

  it('only the path actually taken is compensated', () => {
    for (const express of [true, false]) {
      const h = createHarness(wf).start({ express });
      if (express) {
        h.complete('express');
        h.complete('express2');
      } else h.complete('standard');
      h.fail('other', 'boom');
      while (h.dispatched().length) h.compensate(h.dispatched()[0]!.step);
      expect(h.status).toBe('failed');
      expect(h.snapshot.steps.route?.status).toBe('completed');
      expect(compensated(h)).toEqual(express ? { express: 1, express2: 1 } : { standard: 1 });
      expect(h.snapshot.steps[express ? 'standard' : 'express']).toBeUndefined();
      expectSettled(h);
    }
  });
});

describe('dlq inside a parallel branch', () => {
  const wf = workflow('branch-dlq', 1, { limits: LOG, defaults: once })
    .parallel('fork', { branches: ['a', 'b1'] })
    .task('after', { handler: 'after' })
    .succeed('done')
    .task('a', { handler: 'a', compensate: 'undo', onFailure: 'dlq', end: true })
    .task('b1', { handler: 'b', compensate: 'undo' })
    .sleep('b-wait', { ms: 1000 })
    .task('b2', { handler: 'b', compensate: 'undo', end: true })
    .build();

  it('siblings keep running; requeue finishes the whole workflow', () => {
    const h = createHarness(wf).start();
    h.fail('a', { message: 'partner API down', code: 'DOWN' });
    expect(h.status).toBe('dlq');
    expect(h.snapshot.steps.a?.status).toBe('dlq');
    expect(h.snapshot.error).toMatchObject({ step: 'a', code: 'DOWN' });
    h.complete('b1');
    h.advance(1000);
    h.complete('b2');
    expect(h.status).toBe('dlq');
    expect(h.snapshot.tasks).toEqual({});
    expect(h.snapshot.steps.fork?.branches).toEqual(['running', 'done']);

    expect(h.requeue({ step: 'a' })).toBe(true);
    expect(h.status).toBe('running');
    expect(h.snapshot.error).toBeUndefined();
    h.complete('a');
    h.complete('after');
    expect(h.status).toBe('completed');
    expect(compensationDispatches(h.snapshot)).toEqual({});
    expectSettled(h);
  });

  it('requeue while siblings are still running; a sibling failing later rolls back both', () => {
    const h = createHarness(wf).start();
    h.fail('a', 'down');
    h.requeue();
    h.complete('a');
    expect(h.status).toBe('running');
    h.fail('b1', 'boom');
    h.compensate('a');
    expect(h.status).toBe('failed');
    expect(compensated(h)).toEqual({ a: 1 });
    expectSettled(h);
  });

  it('a cancel while a branch sits in dlq compensates the siblings and ends cancelled', () => {
    const h = createHarness(wf).start();
    h.fail('a', 'down');
    h.complete('b1');
    h.cancel();
    h.compensate('b1');
    expect(h.status).toBe('cancelled');
    expect(h.snapshot.steps.a?.status).toBe('failed');
    expectSettled(h);
  });
});

describe('dlq bookkeeping in parallel blocks', () => {
  const two = (join: 'all' | 'any') =>
    workflow(`two-dlq-${join}`, 1, { limits: LOG, defaults: once, onFailure: 'dlq' })
      .parallel('fork', { branches: ['a', 'b', 'c'], join })
      .succeed('done')
      .task('a', { handler: 'a', end: true })
      .task('b', { handler: 'b', end: true })
      .task('c', { handler: 'c', end: true })
      .build();

  it('requeueing one of two parked steps keeps the error of the other', () => {
    const h = createHarness(two('all')).start();
    h.fail('a', 'a down');
    h.fail('b', 'b down');
    expect(h.snapshot.error).toMatchObject({ step: 'b' });
    h.requeue({ step: 'b' });
    expect(h.status).toBe('dlq');
    expect(h.snapshot.error).toMatchObject({ step: 'a', message: 'a down' });
    h.complete('b');
    h.complete('c');
    h.requeue();
    expect(h.snapshot.error).toBeUndefined();
    h.complete('a');
    expect(h.status).toBe('completed');
    expectSettled(h);
  });

  it('a parked step in a branch the join no longer needs is dropped with its error', () => {
    const h = createHarness(two('any')).start();
    h.fail('a', 'a down');
    expect(h.status).toBe('dlq');
    h.complete('b');
    expect(h.status).toBe('completed');
    expect(h.snapshot.steps.a?.status).toBe('skipped');
    expect(h.snapshot.error).toBeUndefined();
    expectSettled(h);
  });
});

describe('compensateOnFailure and pivots', () => {
  it('a failed step that opts in is compensated with the same idempotency key, first', () => {
    const wf = workflow('cof', 1, { limits: LOG, defaults: once })
      .task('a', { handler: 'a', compensate: 'undoA' })
      .task('b', { handler: 'b', compensate: 'undoB', compensateOnFailure: true })
      .build();
    const h = createHarness(wf, { id: 'i' }).start();
    h.complete('a');
    const key = h.dispatched('b')[0]!.idempotencyKey;
    h.fail('b', 'partial write');
    expect(h.dispatched()[0]).toMatchObject({ step: 'b', phase: 'compensate', idempotencyKey: key });
    h.compensate('b');
    h.compensate('a');
    expect(compensationOrder(h.snapshot)).toEqual(['b', 'a']);
    expect(h.status).toBe('failed');
    expectSettled(h);
  });

  it('a step that opted in and was parked in dlq is compensated when the instance is cancelled', () => {
    const wf = workflow('cof-dlq', 1, { limits: LOG, defaults: once, onFailure: 'dlq' })
      .task('a', { handler: 'a', compensate: 'undoA' })
      .task('b', { handler: 'b', compensate: 'undoB', compensateOnFailure: true })
      .build();
    const h = createHarness(wf).start();
    h.complete('a');
    h.fail('b', 'partial write');
    expect(h.status).toBe('dlq');
    h.cancel();
    h.compensate('b');
    h.compensate('a');
    expect(h.status).toBe('cancelled');
    expect(compensated(h)).toEqual({ a: 1, b: 1 });
    expectSettled(h);
  });

  it('a detached handler that opted in is compensated when it fails', () => {
    const wf = workflow('cof-detached', 1, { limits: LOG, defaults: once })
      .task('a', { handler: 'a', compensate: 'undoA', compensateOnFailure: true })
      .build();
    const h = createHarness(wf).start();
    h.cancel();
    h.fail('a', 'aborted halfway');
    h.compensate('a');
    expect(h.status).toBe('cancelled');
    expect(compensated(h)).toEqual({ a: 1 });
    expectSettled(h);
  });

  it('a step that opted in and waits to retry after a failed attempt is compensated on cancel', () => {
    const wf = workflow('cof-retry', 1, { limits: LOG, defaults: { retry: { maxAttempts: 3 } } })
      .task('a', { handler: 'a', compensate: 'undoA', compensateOnFailure: true })
      .task('b', { handler: 'b', compensate: 'undoB' })
      .build();
    const h = createHarness(wf).start();
    h.fail('a', 'partial write');
    expect(h.snapshot.timers).toHaveLength(1);
    h.cancel();
    h.compensate('a');
    expect(h.status).toBe('cancelled');
    expect(compensated(h)).toEqual({ a: 1 });
    expectSettled(h);

    // Without a failed attempt behind it, a step cut off before it ran is not compensated.
    const h2 = createHarness(wf).start();
    h2.complete('a');
    h2.cancel();
    h2.fail('b', 'aborted');
    h2.compensate('a');
    expect(h2.status).toBe('cancelled');
    expect(compensated(h2)).toEqual({ a: 1 });
  });

  it('an explicit fail step after a pivot ends the workflow without rollback', () => {
    const wf = workflow('pivot-fail', 1, { limits: LOG, defaults: once })
      .task('a', { handler: 'a', compensate: 'undoA' })
      .task('p', { handler: 'p', pivot: true })
      .choice('check', {
        branches: [{ when: { '==': [{ var: 'outputs.p.ok' }, true] }, next: 'done' }],
        otherwise: 'rejected',
      })
      .succeed('done')
      .fail('rejected', { error: { message: 'not ok', code: 'REJECTED' } })
      .build();
    const h = createHarness(wf).start();
    h.complete('a');
    h.complete('p', { ok: false });
    expect(h.status).toBe('failed');
    expect(h.snapshot.error).toMatchObject({ code: 'REJECTED', step: 'rejected' });
    expect(compensationDispatches(h.snapshot)).toEqual({});
    expectSettled(h);
  });
});
