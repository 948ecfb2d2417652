import { isStepfoldError, type Snapshot, step } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { orderWorkflow } from './fixtures.js';

// `task.released`: a runner gives back a task dispatched to it that it never started (a worker
// stopping), so any worker takes it now, as the same attempt, instead of waiting out its deadline.

const started = (): Snapshot =>
  step(orderWorkflow, null, { type: 'start', at: 1_000, id: 'o-9', input: { amount: 5 } });

describe('task.released', () => {
  it('queues the dispatched attempt again, due at once, same attempt and key', () => {
    const s = started();
    const before = s.tasks.reserve!;
    expect(before.queued).toBeUndefined();
    const r = step(orderWorkflow, s, { type: 'task.released', at: 2_000, step: 'reserve', attempt: 1 });
    expect(r.version).toBe(s.version + 1);
    expect(r.tasks.reserve).toEqual({
      ...before,
      leaseUntil: undefined, // queued, it runs nowhere: no lease until taken
      queued: true,
      deadline: 2_000,
      dispatchVersion: r.version,
      releases: 1,
    });
    expect(r.wakeAt).toBe(2_000);
    expect(r.log.at(-1)).toMatchObject({ type: 'task.released', step: 'reserve', attempt: 1 });
    expect(r.steps.reserve).toEqual(s.steps.reserve); // not an attempt spent
  });

  it('a tick then takes it as the same attempt with a fresh deadline, and its result completes the step', () => {
    const released = step(orderWorkflow, started(), {
      type: 'task.released',
      at: 2_000,
      step: 'reserve',
      attempt: 1,
    });
    const taken = step(orderWorkflow, released, { type: 'tick', at: 2_500 });
    expect(taken.tasks.reserve).toMatchObject({ attempt: 1, deadline: 2_500 + 30_000 });
    expect(taken.tasks.reserve!.queued).toBeUndefined();
    expect(taken.log.at(-1)).toMatchObject({ type: 'task.taken', step: 'reserve', attempt: 1 });
    // The give-backs are counted per attempt, across takes: a worker stops giving it back after a few.
    expect(taken.tasks.reserve!.releases).toBe(1);
    const again = step(orderWorkflow, taken, {
      type: 'task.released',
      at: 2_700,
      step: 'reserve',
      attempt: 1,
    });
    expect(again.tasks.reserve!.releases).toBe(2);
    const done = step(orderWorkflow, taken, {
      type: 'task.completed',
      at: 2_600,
      step: 'reserve',
      attempt: 1,
      output: { reservation: 'r1' },
    });
    expect(done.steps.reserve!.status).toBe('completed');
  });

  it('changes nothing for another attempt, another key, a task given back already, or none at all', () => {
    const s = started();
    const release = (e: object) =>
      step(orderWorkflow, s, { type: 'task.released', at: 2_000, step: 'reserve', attempt: 1, ...e });
    expect(release({ attempt: 2 })).toBe(s);
    expect(release({ key: 'o-9/1/reserve/2' })).toBe(s);
    expect(release({ step: 'charge' })).toBe(s);
    const once = release({});
    expect(step(orderWorkflow, once, { type: 'task.released', at: 3_000, step: 'reserve', attempt: 1 })).toBe(
      once,
    );
  });

  it('is refused with INVALID_EVENT when malformed, and nothing is written', () => {
    const s = started();
    for (const bad of [{ attempt: 0 }, { step: '' }, { phase: 'later' }]) {
      let caught: unknown;
      try {
        step(orderWorkflow, s, {
          type: 'task.released',
          at: 2_000,
          step: 'reserve',
          attempt: 1,
          ...bad,
        } as never);
      } catch (e) {
        caught = e;
      }
      expect(isStepfoldError(caught, 'INVALID_EVENT')).toBe(true);
    }
  });
});
