import {
  createHarness,
  createMemoryStore,
  createRunner,
  type HandlerContext,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { compensated, compensationOrder, expectSettled } from './saga-helpers.js';

const wf = workflow('cancel-in-flight', 1, { limits: { log: 1000 }, defaults: { retry: { maxAttempts: 1 } } })
  .task('book', { handler: 'book', compensate: 'unbook' })
  .task('work', { handler: 'work', compensate: 'undoWork' })
  .task('notify', { handler: 'notify' })
  .build();

describe('cancel while a handler is running', () => {
  it('the task is detached; if it still completes, its step is compensated before cancelled', () => {
    const h = createHarness(wf).start();
    h.complete('book');
    const inFlight = h.dispatched('work')[0]!;
    h.cancel('user');
    expect(h.snapshot.tasks.work).toMatchObject({ attempt: inFlight.attempt, detached: true });
    expect(h.dispatched().map((t) => `${t.step}:${t.phase}`)).toEqual(['book:compensate']);
    h.compensate('book');
    expect(h.status).toBe('compensating');
    expect(h.cancel()).toBe(false); // a second cancel changes nothing
    h.complete('work', { done: true }); // the handler ignored its AbortSignal
    expect(h.status).toBe('compensating');
    h.compensate('work');
    expect(h.status).toBe('cancelled');
    expect(compensationOrder(h.snapshot)).toEqual(['book', 'work']);
    expect(compensated(h)).toEqual({ book: 1, work: 1 });
    expect(h.snapshot.steps.notify).toBeUndefined();
    expectSettled(h);
  });

  it('a handler that stops on its signal (fails) is not compensated', () => {
    const h = createHarness(wf).start();
    h.complete('book');
    h.cancel();
    h.fail('work', 'aborted');
    expect(h.status).toBe('compensating');
    h.compensate('book');
    expect(h.status).toBe('cancelled');
    expect(compensated(h)).toEqual({ book: 1 });
    expectSettled(h);
  });

  it('an abort after a cancel stops at once and ignores the late result', () => {
    const h = createHarness(wf).start();
    h.complete('book');
    h.cancel();
    h.abort('operator');
    expect(h.status).toBe('aborted');
    expect(h.complete('work', 'late', { attempt: 1 })).toBe(false);
    expectSettled(h);
  });

  it('runner: the AbortSignal fires, the late completion is compensated, then cancelled', async () => {
    const calls: string[] = [];
    let started!: () => void;
    const running = new Promise<void>((r) => {
      started = r;
    });
    let aborted = false;
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [wf],
      handlers: {
        book: () => ({ booked: true }),
        unbook: () => {
          calls.push('unbook');
          return null;
        },
        work: async (ctx: HandlerContext) => {
          started();
          await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
          aborted = ctx.signal.aborted;
          return { finishedAnyway: true }; // completes despite the signal
        },
        undoWork: () => {
          calls.push('undoWork');
          return null;
        },
        notify: () => null,
      },
    });
    const starting = runner.start('cancel-in-flight', 'c-1');
    await running;
    const afterCancel = await runner.cancel('c-1', 'user');
    expect(['compensating', 'cancelled']).toContain(afterCancel.status);
    await starting;
    await runner.idle();
    const s = (await runner.get('c-1'))!;
    expect(aborted).toBe(true);
    expect(s.status).toBe('cancelled');
    expect(s.steps.work?.status).toBe('compensated');
    expect(s.steps.book?.status).toBe('compensated');
    expect(calls.sort()).toEqual(['unbook', 'undoWork']);
    expect(s.tasks).toEqual({});
  });
});

describe('rollback of a step in a loop', () => {
  // A → wait for "more" (or time out to the end) → A again: A's state is per step, latest iteration.
  const loop = workflow('loop', 1, {
    limits: { log: 1000 },
    defaults: { retry: { maxAttempts: 2, initialMs: 100 } },
  })
    .task('A', { handler: 'a', compensate: 'undoA' })
    .wait('w', { signal: 'more', timeoutMs: 1000, onTimeout: 'fin', next: 'A' })
    .succeed('fin')
    .build();

  function secondIteration() {
    const h = createHarness(loop).start();
    h.complete('A');
    h.signal('more');
    expect(h.dispatched('A')[0]).toMatchObject({ idempotencyKey: 'test-1/1/A/2' });
    return h;
  }

  it('a cancel while the next iteration is in flight still compensates A once if that run fails', () => {
    const h = secondIteration();
    h.cancel();
    expect(h.status).toBe('compensating');
    h.fail('A', 'aborted');
    h.compensate('A');
    expect(h.status).toBe('cancelled');
    expect(compensated(h)).toEqual({ A: 1 });
    expectSettled(h);
  });

  it('a cancel while the next iteration is in flight compensates A once if that run completes', () => {
    const h = secondIteration();
    h.cancel();
    h.complete('A');
    h.compensate('A');
    expect(h.status).toBe('cancelled');
    expect(compensated(h)).toEqual({ A: 1 });
    expectSettled(h);
  });

  it('a cancel while the next iteration waits for a retry compensates the earlier iteration', () => {
    const h = secondIteration();
    h.fail('A', 'flaky');
    expect(h.snapshot.timers).toHaveLength(1);
    h.cancel();
    h.compensate('A');
    expect(h.status).toBe('cancelled');
    expect(compensated(h)).toEqual({ A: 1 });
    expectSettled(h);
  });

  it('the next iteration failing for good compensates the earlier one', () => {
    const h = secondIteration();
    h.fail('A', { message: 'gone', retryable: false });
    h.compensate('A');
    expect(h.status).toBe('failed');
    expect(compensated(h)).toEqual({ A: 1 });
    expectSettled(h);
  });
});
