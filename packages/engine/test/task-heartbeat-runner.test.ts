import {
  createMemoryStore,
  createRunner,
  createWorker,
  type HandlerContext,
  handlerHeartbeats,
  isStepfoldError,
  type Snapshot,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// The runner's side of heartbeats (memory store): for a task with `heartbeatMs` the attempt's lease
// follows `ctx.heartbeat()`, not the runner's own renewals, so a handler that hangs in a live
// process is lost after heartbeatMs (plus the store's second of index rounding and a poll) and
// retried with its last details; heartbeat writes are throttled to one per third of heartbeatMs.

const HB = 600;
const job = workflow('hb', 1).task('pull', { handler: 'pull', heartbeatMs: HB, timeoutMs: 60_000 }).build();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a runner and a handler that heartbeats', () => {
  it('a handler heartbeating runs past many heartbeatMs, one write per third of it at most, the last details kept', async () => {
    const store = createMemoryStore();
    const beats: Snapshot[] = [];
    const runner = createRunner({
      heartbeats: handlerHeartbeats,
      store,
      workflows: [job],
      handlers: {
        pull: async ({ heartbeat }: HandlerContext) => {
          // A tight loop of heartbeats for 4 heartbeatMs: throttled, not one write per call.
          const end = Date.now() + 4 * HB;
          for (let page = 0; Date.now() < end; page++) {
            heartbeat({ page });
            await sleep(5);
          }
          return 'pulled';
        },
      },
      // A heartbeat write records no transition.
      onWritten: (s, transitions) => {
        if (transitions.length === 0) beats.push(s);
      },
    });
    // Another runner polls all the while: it must never find the attempt lost.
    const other = createRunner({
      store,
      workflows: [job],
      heartbeats: handlerHeartbeats,
      handlers: { pull: () => 'other' },
    });
    const done = runner.start('hb', 'hb-alive', {});
    let polling = true;
    const polls = (async () => {
      while (polling) {
        await other.processDue();
        await sleep(50);
      }
    })();
    const s = await done;
    polling = false;
    await polls;
    expect(s.status).toBe('completed');
    expect(s.steps.pull).toMatchObject({ attempt: 1, output: 'pulled' });
    // Hundreds of calls; about 2400 / 200 = 12 writes, each with the newest details then.
    expect(beats.length).toBeGreaterThanOrEqual(6);
    expect(beats.length).toBeLessThanOrEqual(14);
    const pages = beats.map((b) => (b.steps.pull!.heartbeatDetails as { page: number }).page);
    for (let i = 1; i < pages.length; i++) expect(pages[i]!).toBeGreaterThan(pages[i - 1]!);
    // Gone with the completion.
    expect(s.steps.pull?.heartbeatDetails).toBeUndefined();
  });

  it('a handler that stops heartbeating in a live worker is lost at heartbeatMs, not its timeout, and the retry resumes from its details', async () => {
    const store = createMemoryStore();
    let hungSignal: AbortSignal | undefined;
    const seen: unknown[] = [];
    const runner = createRunner({
      heartbeats: handlerHeartbeats,
      store,
      workflows: [job],
      handlers: {
        pull: async ({ attempt, heartbeat, heartbeatDetails, signal }: HandlerContext) => {
          seen.push(heartbeatDetails);
          if (attempt > 1) return { resumedFrom: heartbeatDetails };
          heartbeat({ cursor: 'c-1' });
          await sleep(HB / 2);
          heartbeat({ cursor: 'c-2' });
          hungSignal = signal;
          // Hung: never returns, never heartbeats again (the process lives on).
          return new Promise(() => {});
        },
      },
    });
    // The worker's poll rounds come every third of the shortest lease it knows: heartbeatMs here.
    const worker = createWorker({ runner, poll: { minMs: 10, jitter: 0 } });
    await worker.start();
    try {
      const t0 = Date.now();
      await runner.start('hb', 'hb-hung', {}, { wait: 'write' });
      await expect
        .poll(async () => (await store.load('hb-hung'))?.status, { timeout: 5_000, interval: 25 })
        .toBe('completed');
      const took = Date.now() - t0;
      const s = (await store.load('hb-hung'))!;
      expect(s.steps.pull).toMatchObject({ attempt: 2, output: { resumedFrom: { cursor: 'c-2' } } });
      expect(s.log.find((e) => e.type === 'task.failed')?.detail).toMatch(/^HEARTBEAT_TIMEOUT: /);
      expect(seen).toEqual([undefined, { cursor: 'c-2' }]);
      // The last heartbeat written by ~HB, lost HB later, found within the store's second of rounding
      // and a lease round (a third of HB), with room for a loaded machine: seconds, not the 60 s timeout.
      expect(took).toBeLessThan(2 * HB + 1_000 + 3 * HB);
      // The hung handler learns it lost the attempt once its runner reads the retry.
      await expect.poll(() => hungSignal?.aborted, { timeout: 3_000 }).toBe(true);
    } finally {
      await worker.stop({ graceMs: 10, abortMs: 10 });
    }
  });

  it("a task without heartbeatMs keeps its handler's details while the runner renews its lease", async () => {
    const plain = workflow('plain', 1, { defaults: { retry: { maxAttempts: 2, initialMs: 1, jitter: 0 } } })
      .task('work', { handler: 'work' })
      .build();
    const store = createMemoryStore();
    const seen: unknown[] = [];
    const runner = createRunner({
      heartbeats: handlerHeartbeats,
      store,
      workflows: [plain],
      taskLeaseMs: 300,
      handlers: {
        work: async ({ attempt, heartbeat, heartbeatDetails }: HandlerContext) => {
          seen.push(heartbeatDetails);
          if (attempt > 1) return 'second';
          heartbeat({ done: 3 });
          // Past a third of the lease: the beat is written, then the attempt fails.
          await sleep(400);
          throw new Error('flaky');
        },
      },
    });
    let s = await runner.start('plain', 'p-1', {});
    for (let i = 0; i < 100 && s.status !== 'completed'; i++) {
      await sleep(10);
      await runner.processDue();
      s = (await store.load('p-1'))!;
    }
    expect(s.status).toBe('completed');
    expect(seen).toEqual([undefined, { done: 3 }]);
  });

  it('refuses ctx.heartbeat with INVALID_OPTIONS on a runner without handlerHeartbeats, naming the option', async () => {
    const plain = workflow('bare', 1).task('work', { handler: 'work' }).build();
    let thrown: unknown;
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [plain],
      handlers: {
        work: ({ heartbeat }: HandlerContext) => {
          try {
            heartbeat({ done: 1 });
          } catch (e) {
            thrown = e;
          }
          return 'done';
        },
      },
    });
    const s = await runner.start('bare', 'b-1', {});
    expect(s.status).toBe('completed');
    expect(isStepfoldError(thrown, 'INVALID_OPTIONS')).toBe(true);
    expect((thrown as { issues: { path: string }[] }).issues[0]?.path).toBe('heartbeats');
    expect(s.steps.work?.heartbeatDetails).toBeUndefined();
  });

  it('refuses a runner that runs the handlers of a step with heartbeatMs without handlerHeartbeats, at creation', () => {
    const make = () =>
      createRunner({ store: createMemoryStore(), workflows: [job], handlers: { pull: () => 'x' } });
    const e = (() => {
      try {
        make();
      } catch (x) {
        return x;
      }
    })();
    expect(isStepfoldError(e, 'INVALID_OPTIONS')).toBe(true);
    expect((e as { issues: { path: string; message: string }[] }).issues[0]).toMatchObject({
      path: 'heartbeats',
      message: expect.stringContaining('step pull of workflow hb v1 has heartbeatMs'),
    });
    // A producer that runs no handlers needs none.
    expect(() =>
      createRunner({ store: createMemoryStore(), workflows: [job], execute: false }),
    ).not.toThrow();
  });
});
