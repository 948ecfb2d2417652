import {
  createHarness,
  defineWorkflow,
  HEARTBEAT_DETAILS_MAX_BYTES,
  isStepfoldError,
  type Snapshot,
  step,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { referenceStep } from '../src/reducer/reducer.js';

// Heartbeats of a task with `heartbeatMs`, in the pure reducer and the harness's fake clock: the
// attempt's lease is `heartbeatMs` long and only `task.heartbeat`s move it; silence past it loses
// the attempt (`HEARTBEAT_TIMEOUT`), retried by policy long before `timeoutMs`; the latest details
// stay with the step's state for the next attempt, and go once the step completes.

const HB = 2_000;
const sync = workflow('sync', 1, { defaults: { retry: { maxAttempts: 3, initialMs: 1_000, jitter: 0 } } })
  .task('pull', { handler: 'pull', heartbeatMs: HB, timeoutMs: 60_000 })
  .task('after', { handler: 'after' })
  .build();

const T = 1_000_000;
/** What `fn` throws: its stable code and issue paths (undefined when it returns). */
function thrown(fn: () => unknown): { code: string; paths: string[] } | undefined {
  try {
    fn();
  } catch (e) {
    if (!isStepfoldError(e)) throw e;
    return { code: e.code, paths: e.issues.map((i) => i.path) };
  }
  return undefined;
}
const started = (): Snapshot => step(sync, null, { type: 'start', at: T, id: 's-1', input: {} });
const beat = (at: number, attempt = 1, details?: unknown) =>
  ({
    type: 'task.heartbeat',
    at,
    step: 'pull',
    attempt,
    ...(details === undefined ? {} : { details }),
  }) as const;

describe('heartbeatMs in a definition', () => {
  const def = (pull: Record<string, unknown>, defaults?: Record<string, unknown>) => ({
    name: 'd',
    version: 1,
    start: 'pull',
    ...(defaults ? { defaults } : {}),
    steps: { pull: { kind: 'task', handler: 'pull', ...pull } },
  });
  const issues = (input: ReturnType<typeof def>) => {
    try {
      defineWorkflow(input as never);
    } catch (e) {
      if (isStepfoldError(e, 'INVALID_DEFINITION')) return e.issues.map((i) => i.path);
      throw e;
    }
    return [];
  };

  it('is a positive integer below the step timeout, the workflow default, or the built-in 300 s', () => {
    expect(issues(def({ heartbeatMs: 5_000 }))).toEqual([]);
    expect(issues(def({ heartbeatMs: 5_000, timeoutMs: 6_000 }))).toEqual([]);
    expect(issues(def({ heartbeatMs: 0 }))).toEqual(['steps.pull.heartbeatMs']);
    expect(issues(def({ heartbeatMs: 1.5 }))).toEqual(['steps.pull.heartbeatMs']);
    expect(issues(def({ heartbeatMs: 6_000, timeoutMs: 6_000 }))).toEqual(['steps.pull.heartbeatMs']);
    expect(issues(def({ heartbeatMs: 6_000 }, { timeoutMs: 5_000 }))).toEqual(['steps.pull.heartbeatMs']);
    expect(issues(def({ heartbeatMs: 6_000, timeoutMs: 7_000 }, { timeoutMs: 5_000 }))).toEqual([]);
    expect(issues(def({ heartbeatMs: 300_000 }))).toEqual(['steps.pull.heartbeatMs']);
  });

  it('is refused by the builder at build time too (past its types)', () => {
    const b = workflow('b', 1).task('pull', {
      handler: 'pull',
      heartbeatMs: 9_000 as number,
      timeoutMs: 8_000,
    });
    expect(thrown(() => b.build())).toEqual({
      code: 'INVALID_DEFINITION',
      paths: ['steps.pull.heartbeatMs'],
    });
  });
});

describe('the lease of an attempt that heartbeats', () => {
  it('is heartbeatMs long, kept on the attempt, and the instance wakes at it', () => {
    const s = started();
    expect(s.tasks.pull).toMatchObject({
      attempt: 1,
      heartbeatMs: HB,
      leaseUntil: T + HB,
      deadline: T + 60_000,
    });
    expect(s.wakeAt).toBe(T + HB);
  });

  it('moves on by heartbeatMs with each heartbeat, which keeps its latest details in the step state', () => {
    let s = step(sync, started(), beat(T + 1_500, 1, { page: 1 }));
    expect(s.tasks.pull?.leaseUntil).toBe(T + 1_500 + HB);
    expect(s.steps.pull?.heartbeatDetails).toEqual({ page: 1 });
    s = step(sync, s, beat(T + 3_000));
    expect(s.tasks.pull?.leaseUntil).toBe(T + 3_000 + HB);
    // A heartbeat without details keeps the last ones.
    expect(s.steps.pull?.heartbeatDetails).toEqual({ page: 1 });
    expect(Object.isFrozen(s.steps.pull?.heartbeatDetails)).toBe(true);
  });

  it('is lost at its end with HEARTBEAT_TIMEOUT, retried at once with the details, long before the timeout', () => {
    const s = step(sync, started(), beat(T + 1_000, 1, { page: 4 }));
    expect(step(sync, s, { type: 'tick', at: T + 2_999 })).toBe(s);
    const lost = step(sync, s, { type: 'tick', at: T + 3_000 });
    expect(lost.steps.pull?.error).toMatchObject({ code: 'HEARTBEAT_TIMEOUT', retryable: true });
    expect(lost.tasks.pull).toMatchObject({ attempt: 2, heartbeatMs: HB, leaseUntil: T + 3_000 + HB });
    expect(lost.steps.pull?.heartbeatDetails).toEqual({ page: 4 });
  });

  it('ignores a heartbeat of an attempt already replaced', () => {
    const lost = step(sync, started(), { type: 'tick', at: T + HB });
    expect(lost.tasks.pull?.attempt).toBe(2);
    expect(step(sync, lost, beat(T + HB + 10, 1, { stale: true }))).toBe(lost);
  });

  it('drops the details once the step completes, on the straight path as on the reference path', () => {
    const s = step(sync, started(), beat(T + 100, 1, { page: 9 }));
    const ev = { type: 'task.completed', at: T + 200, step: 'pull', attempt: 1, output: 'ok' } as const;
    const plain = step(sync, s, ev);
    expect(plain.steps.pull?.heartbeatDetails).toBeUndefined();
    expect(plain.steps.pull?.output).toBe('ok');
    expect(JSON.stringify(plain)).toBe(JSON.stringify(referenceStep(sync, s, ev)));
    const hb = workflow('two', 1)
      .task('a', { handler: 'a' })
      .task('b', { handler: 'b', heartbeatMs: 700 })
      .build();
    const a = step(hb, null, { type: 'start', at: T, id: 't-1', input: {} });
    const next = { type: 'task.completed', at: T + 5, step: 'a', attempt: 1, output: 1 } as const;
    const b = step(hb, a, next);
    expect(b.tasks.b).toMatchObject({ heartbeatMs: 700, leaseUntil: T + 705 });
    expect(JSON.stringify(b)).toBe(JSON.stringify(referenceStep(hb, a, next)));
  });

  it('refuses details that are too large or not JSON, writing nothing', () => {
    const s = started();
    const big = 'x'.repeat(HEARTBEAT_DETAILS_MAX_BYTES);
    for (const details of [{ big }, { n: 10n }])
      expect(thrown(() => step(sync, s, beat(T + 1, 1, details)))).toEqual({
        code: 'INVALID_EVENT',
        paths: ['details'],
      });
  });

  it('fails the step for good when the policy lists HEARTBEAT_TIMEOUT as not retryable', () => {
    const strict = workflow('strict', 1)
      .task('pull', { handler: 'pull', heartbeatMs: 500, retry: { nonRetryable: ['HEARTBEAT_TIMEOUT'] } })
      .build();
    const s = step(strict, null, { type: 'start', at: T, id: 'x-1', input: {} });
    const lost = step(strict, s, { type: 'tick', at: T + 500 });
    expect(lost.status).toBe('failed');
    expect(lost.steps.pull?.error?.code).toBe('HEARTBEAT_TIMEOUT');
  });

  it('keeps the details of a task without heartbeatMs too, its lease the runner’s', () => {
    const plain = workflow('p', 1).task('w', { handler: 'w' }).build();
    const s = step(plain, null, { type: 'start', at: T, id: 'p-1', input: {} }, { leaseMs: 5_000 });
    const b = step(
      plain,
      s,
      { type: 'task.heartbeat', at: T + 10, step: 'w', attempt: 1, details: [1] },
      { leaseMs: 5_000 },
    );
    expect(b.tasks.w?.leaseUntil).toBe(T + 5_010);
    expect(b.steps.w?.heartbeatDetails).toEqual([1]);
    expect(b.tasks.w?.heartbeatMs).toBeUndefined();
  });
});

describe('heartbeats in the harness (fake clock)', () => {
  it('heartbeats keep the attempt alive, silence loses it at heartbeatMs, the retry sees the details', async () => {
    const h = createHarness(sync, { now: T }).start({});
    // Ten heartbeats over 15 s: alive all along, though 7 leases long.
    for (let i = 1; i <= 10; i++) {
      h.advance(1_500);
      expect(h.dispatched('pull')[0]?.attempt).toBe(1);
      h.heartbeat('pull', { page: i });
    }
    // Silent: still running just before heartbeatMs, lost at it.
    h.advance(HB - 1);
    expect(h.dispatched('pull')[0]?.attempt).toBe(1);
    h.advance(1);
    expect(h.snapshot.steps.pull?.error?.code).toBe('HEARTBEAT_TIMEOUT');
    expect(h.dispatched('pull')[0]?.attempt).toBe(2);
    let seen: unknown;
    await h.run({
      pull: (ctx) => {
        seen = ctx.heartbeatDetails;
        ctx.heartbeat({ page: 11 });
        return 'pulled';
      },
      after: () => 'done',
    });
    expect(seen).toEqual({ page: 10 });
    expect(h.status).toBe('completed');
    expect(h.snapshot.steps.pull?.heartbeatDetails).toBeUndefined();
    expect(h.replayed()).toEqual(h.snapshot);
  });

  it('a first attempt sees no details; oversized details throw HEARTBEAT_TOO_LARGE from ctx.heartbeat', async () => {
    const h = createHarness(sync, { now: T }).start({});
    let first: unknown = 'unset';
    let thrown: unknown;
    await h.run({
      pull: (ctx) => {
        first = ctx.heartbeatDetails;
        try {
          ctx.heartbeat({ blob: 'x'.repeat(HEARTBEAT_DETAILS_MAX_BYTES) });
        } catch (e) {
          thrown = e;
        }
        return 1;
      },
      after: () => 2,
    });
    expect(first).toBeUndefined();
    expect(isStepfoldError(thrown, 'HEARTBEAT_TOO_LARGE')).toBe(true);
    expect(h.status).toBe('completed');
  });

  it('advanceToWake reaches the end of a silent heartbeat lease, not the deadline', () => {
    const h = createHarness(sync, { now: T }).start({});
    h.advanceToWake();
    expect(h.now).toBe(T + HB);
    expect(h.dispatched('pull')[0]?.attempt).toBe(2);
  });
});
