import {
  attemptOverdue,
  composition,
  createHarness,
  DEFAULT_TASK_LEASE_MS,
  defineWorkflow,
  isStepfoldError,
  type Snapshot,
  step,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { referenceStep } from '../src/reducer/reducer.js';

// Leases of running attempts: an attempt that starts running holds `leaseUntil` (its time plus the
// reduce option `leaseMs`), which its runner's `task.heartbeat`s move on. The instance is due at
// the earlier of the deadline and the lease; a tick past a lapsed lease loses the attempt
// (`LEASE_LOST`) and retries it by the step's policy, the same key and the next attempt.

const job = workflow('job', 1, { defaults: { retry: { maxAttempts: 3, initialMs: 1_000, jitter: 0 } } })
  .task('work', { handler: 'work' }) // the default deadline: 300 s
  .task('after', { handler: 'after' })
  .build();

const T = 1_000_000;
const started = (leaseMs?: number, handoff = false): Snapshot =>
  step(
    job,
    null,
    { type: 'start', at: T, id: 'j-1', input: {}, ...(handoff ? { handoff } : {}) },
    leaseMs === undefined ? {} : { leaseMs },
  );

describe('the lease of a running attempt', () => {
  it('is set when the attempt is dispatched to run: the instance wakes at the lease, not the 300 s deadline', () => {
    const s = started();
    expect(s.tasks.work).toMatchObject({
      attempt: 1,
      deadline: T + 300_000,
      leaseUntil: T + DEFAULT_TASK_LEASE_MS,
    });
    expect(s.wakeAt).toBe(T + 10_000);
    expect(started(2_500).tasks.work?.leaseUntil).toBe(T + 2_500);
  });

  it('is not held by a task queued for a worker; the tick that takes it gives it one', () => {
    const queued = started(4_000, true);
    expect(queued.tasks.work).toMatchObject({ queued: true, deadline: T });
    expect(queued.tasks.work?.leaseUntil).toBeUndefined();
    const taken = step(job, queued, { type: 'tick', at: T + 50 }, { leaseMs: 4_000 });
    expect(taken.tasks.work).toMatchObject({ attempt: 1, deadline: T + 50 + 300_000, leaseUntil: T + 4_050 });
    expect(taken.tasks.work?.queued).toBeUndefined();
    expect(taken.wakeAt).toBe(T + 4_050);
  });

  it('is given up with the task when its runner gives the task back (queued again, no lease)', () => {
    const s = step(job, started(), { type: 'task.released', at: T + 5, step: 'work', attempt: 1 });
    expect(s.tasks.work).toMatchObject({ queued: true, deadline: T + 5 });
    expect(s.tasks.work?.leaseUntil).toBeUndefined();
  });

  it('is renewed by a heartbeat of the attempt: moved to the heartbeat plus the lease, one version, nothing logged', () => {
    const s = started();
    const beat = step(job, s, { type: 'task.heartbeat', at: T + 6_000, step: 'work', attempt: 1 });
    expect(beat.version).toBe(s.version + 1);
    expect(beat.tasks.work).toEqual({ ...s.tasks.work, leaseUntil: T + 16_000 });
    expect(beat.wakeAt).toBe(T + 16_000);
    expect(beat.log).toEqual(s.log);
    // Renewed in time, it is not lost when the first lease would have lapsed.
    expect(step(job, beat, { type: 'tick', at: T + 12_000 })).toBe(beat);
    // The idempotency key, when given, must be the attempt's.
    const keyed = step(job, s, {
      type: 'task.heartbeat',
      at: T + 6_000,
      step: 'work',
      attempt: 1,
      key: s.tasks.work!.idempotencyKey,
    });
    expect(keyed.tasks.work?.leaseUntil).toBe(T + 16_000);
  });

  it('ignores a stale heartbeat: another attempt, another key, a queued task, no task, or a lease that would not move on', () => {
    const s = started();
    const at = T + 6_000;
    for (const ev of [
      { type: 'task.heartbeat', at, step: 'work', attempt: 2 },
      { type: 'task.heartbeat', at, step: 'work', attempt: 1, key: 'j-1/1/work/9' },
      { type: 'task.heartbeat', at, step: 'after', attempt: 1 },
      { type: 'task.heartbeat', at: T - 1, step: 'work', attempt: 1 },
    ] as const)
      expect(step(job, s, ev), JSON.stringify(ev)).toBe(s);
    const queued = started(undefined, true);
    expect(step(job, queued, { type: 'task.heartbeat', at, step: 'work', attempt: 1 })).toBe(queued);
    // A heartbeat of the lost attempt, after its retry went out, changes nothing either.
    const retried = step(job, s, { type: 'tick', at: T + 10_000 });
    expect(step(job, retried, { type: 'task.heartbeat', at: T + 10_001, step: 'work', attempt: 1 })).toBe(
      retried,
    );
  });

  it('lapsed, loses the attempt: retried at once as the next attempt with the same key, LEASE_LOST', () => {
    const s = started();
    const key = s.tasks.work!.idempotencyKey;
    expect(step(job, s, { type: 'tick', at: T + 9_999 })).toBe(s);
    const lost = step(job, s, { type: 'tick', at: T + 10_000 });
    expect(lost.tasks.work).toMatchObject({ attempt: 2, idempotencyKey: key, leaseUntil: T + 20_000 });
    expect(lost.steps.work?.error).toMatchObject({ code: 'LEASE_LOST', retryable: true });
    expect(lost.status).toBe('running');
    expect(lost.log.map((e) => e.type)).toContain('task.failed');
    expect(lost.log.find((e) => e.type === 'task.failed')?.detail).toMatch(/^LEASE_LOST: /);
    // The lost attempt's late result is stale: nothing changes; the retry's completes the step.
    expect(step(job, lost, { type: 'task.completed', at: T + 11_000, step: 'work', attempt: 1, key })).toBe(
      lost,
    );
    const done = step(job, lost, { type: 'task.completed', at: T + 11_000, step: 'work', attempt: 2, key });
    expect(done.steps.work?.status).toBe('completed');
    expect(done.tasks.after?.leaseUntil).toBe(T + 21_000);
  });

  it('once the retries are spent, fails the step with LEASE_LOST', () => {
    const once = defineWorkflow({
      name: 'once',
      version: 1,
      start: 'work',
      steps: { work: { kind: 'task', handler: 'work', retry: { maxAttempts: 1 } } },
    });
    const s = step(once, null, { type: 'start', at: T, id: 'o-1', input: {} }, { leaseMs: 1_000 });
    const lost = step(once, s, { type: 'tick', at: T + 1_000 }, { leaseMs: 1_000 });
    expect(lost.status).toBe('failed');
    expect(lost.error).toMatchObject({ code: 'LEASE_LOST', step: 'work' });
  });

  it('past the deadline too, the attempt is lost for its deadline: TIMEOUT', () => {
    const short = workflow('short', 1).task('work', { handler: 'work', timeoutMs: 5_000 }).build();
    const s = step(short, null, { type: 'start', at: T, id: 's-1', input: {} });
    expect(s.wakeAt).toBe(T + 5_000); // the deadline comes before the lease
    const lost = step(short, s, { type: 'tick', at: T + 5_000 });
    expect(lost.steps.work?.error?.code).toBe('TIMEOUT');
  });

  it('a snapshot stored before leases (a task with no leaseUntil) keeps its deadline', () => {
    const s = started();
    const { leaseUntil: _, ...unleased } = s.tasks.work!;
    const old = JSON.parse(JSON.stringify({ ...s, tasks: { work: unleased }, wakeAt: unleased.deadline }));
    expect(step(job, old, { type: 'tick', at: T + 60_000 })).toBe(old);
    const lost = step(job, old, { type: 'tick', at: T + 300_000 });
    expect(lost.steps.work?.error?.code).toBe('TIMEOUT');
    // A heartbeat for it has no lease to move: nothing changes.
    expect(step(job, old, { type: 'task.heartbeat', at: T + 5_000, step: 'work', attempt: 1 })).toBe(old);
  });

  it('is the same on the straight path (a result dispatching the next task) as on the reference path', () => {
    const s = started(7_000);
    const ev = { type: 'task.completed', at: T + 3_000, step: 'work', attempt: 1, output: { n: 1 } } as const;
    const plain = step(job, s, ev, { leaseMs: 7_000 });
    expect(JSON.stringify(plain)).toBe(JSON.stringify(referenceStep(job, s, ev, { leaseMs: 7_000 })));
    expect(plain.tasks.after?.leaseUntil).toBe(T + 10_000);
    expect(plain.wakeAt).toBe(T + 10_000);
  });

  it('is refused as a reduce option unless a positive integer: INVALID_OPTIONS, nothing reduced', () => {
    for (const leaseMs of [0, -5, 1.5, Number.NaN])
      expect(() => started(leaseMs), String(leaseMs)).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTIONS' }) as unknown as Error,
      );
    try {
      started(0);
    } catch (e) {
      expect(isStepfoldError(e, 'INVALID_OPTIONS')).toBe(true);
    }
  });
});

describe('leases of map items and child tasks', () => {
  const each = defineWorkflow({
    name: 'each',
    version: 1,
    start: 'items',
    steps: { items: { kind: 'map', items: 'input.xs', handler: 'work', maxConcurrency: 3 } },
  });

  it('a map item whose lease lapsed is retried alone, as its next attempt, with LEASE_LOST', () => {
    const h = createHarness(each, { kinds: [composition] }).start({ xs: [1, 2, 3] });
    expect(Object.values(h.snapshot.tasks).map((t) => t.leaseUntil)).toEqual([10_000, 10_000, 10_000]);
    h.complete('items', 'one', { item: 0 });
    h.advance(10_000, { renew: false });
    const tasks = Object.values(h.snapshot.tasks);
    expect(tasks.map((t) => [t.item, t.attempt])).toEqual([
      [1, 2],
      [2, 2],
    ]);
    expect(h.snapshot.log.filter((e) => e.type === 'task.failed').map((e) => e.detail)).toEqual([
      expect.stringMatching(/^item 1: LEASE_LOST: /),
      expect.stringMatching(/^item 2: LEASE_LOST: /),
    ]);
  });

  it("a child's task holds none: the child instance runs, and reports its end", () => {
    const leaf = workflow('leaf', 1).task('a', { handler: 'a' }).build();
    const parent = defineWorkflow({
      name: 'parent',
      version: 1,
      start: 'sub',
      steps: { sub: { kind: 'child', workflow: 'leaf' } },
    });
    const h = createHarness(parent, { kinds: [composition], workflows: [leaf], effects: 'manual' }).start({});
    expect(h.snapshot.tasks['sub']?.child).toBeDefined();
    expect(h.snapshot.tasks['sub']?.leaseUntil).toBeUndefined();
  });
});

describe('the harness as a live runner', () => {
  it('renews running attempts as the clock moves, so only the deadline loses them', () => {
    const h = createHarness(job).start({});
    h.advance(60_000);
    expect(h.snapshot.tasks.work).toMatchObject({ attempt: 1, leaseUntil: 70_000 });
    expect(h.events.at(-1)).toMatchObject({ type: 'task.heartbeat', step: 'work', attempt: 1, at: 60_000 });
    expect(h.replayed()).toEqual(h.snapshot);
    h.advanceToWake(); // the 300 s deadline, not a lease end
    expect(h.now).toBe(300_000);
    expect(h.snapshot.steps.work?.error?.code).toBe('TIMEOUT');
  });

  it('plays a dead runner with renew: false, and takes the lease from `leaseMs`', () => {
    const h = createHarness(job, { leaseMs: 2_000 }).start({});
    h.advance(2_000, { renew: false });
    expect(h.snapshot.tasks.work).toMatchObject({ attempt: 2, leaseUntil: 4_000 });
    expect(h.snapshot.steps.work?.error?.code).toBe('LEASE_LOST');
  });
});

describe('attemptOverdue', () => {
  it('is true for a running attempt past its lease or deadline, never for a queued one', () => {
    const s = started();
    const t = s.tasks.work!;
    expect(attemptOverdue(t, T + 9_999)).toBe(false);
    expect(attemptOverdue(t, T + 10_000)).toBe(true);
    expect(attemptOverdue(started(undefined, true).tasks.work!, T + 60_000)).toBe(false);
  });
});
