import {
  createMemoryStore,
  createRunner,
  createWorker,
  type HandlerContext,
  isStepfoldError,
  type Snapshot,
  type Store,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// The runner's side of attempt leases: it renews the lease of every handler it still runs (a
// `task.heartbeat` write once half the lease is left, none for a handler that ends sooner), and an
// attempt whose runner stopped renewing is retried by any other runner's due poll.

const job = workflow('job', 1).task('work', { handler: 'work' }).build();
const LEASE = 300;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `store` as a runner cut off from it sees it (`cut.on`): every save fails, as for a dead process. */
function severable(store: Store): { store: Store; cut: { on: boolean } } {
  const cut = { on: false };
  const proxy = new Proxy(store, {
    get(target, key) {
      if (key === 'save' && cut.on) return () => Promise.reject(new Error('connection lost'));
      return Reflect.get(target, key);
    },
  });
  return { store: proxy, cut };
}

describe('a runner renews the leases of its running handlers', () => {
  it('a handler running four leases long is renewed, never lost, and its result is written', async () => {
    const store = createMemoryStore();
    const beats: number[] = [];
    let calls = 0;
    const runner = createRunner({
      store,
      workflows: [job],
      taskLeaseMs: LEASE,
      handlers: {
        work: async () => {
          calls++;
          await sleep(4 * LEASE);
          return 'done';
        },
      },
      // A heartbeat write records no transition.
      onWritten: (s, transitions) => {
        if (transitions.length === 0) beats.push(s.tasks.work?.leaseUntil ?? 0);
      },
    });
    // Another runner polls all the while: it must never find the attempt due.
    const other = createRunner({
      store,
      workflows: [job],
      taskLeaseMs: LEASE,
      handlers: { work: () => 'other' },
    });
    const done = runner.start('job', 'long-1', {});
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
    expect(s.steps.work).toMatchObject({ attempt: 1, output: 'done' });
    expect(calls).toBe(1);
    // Renewed about every half lease: each moved the lease on.
    expect(beats.length).toBeGreaterThanOrEqual(4);
    expect(beats.length).toBeLessThanOrEqual(12);
    for (let i = 1; i < beats.length; i++) expect(beats[i]!).toBeGreaterThan(beats[i - 1]!);
  });

  it('a handler that ends within half its lease costs no renewal write', async () => {
    const store = createMemoryStore();
    let writes = 0;
    const runner = createRunner({
      store,
      workflows: [job],
      taskLeaseMs: LEASE,
      handlers: {
        work: async () => {
          await sleep(20);
          return 'quick';
        },
      },
      onWritten: () => writes++,
    });
    await runner.start('job', 'quick-1', {});
    await sleep(LEASE);
    expect(writes).toBe(2); // the start, the result
  });

  it("a cut-off runner's attempt is retried elsewhere once its lease lapses; its late result is stale and its handler aborted", async () => {
    const shared = createMemoryStore();
    const { store, cut } = severable(shared);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let running!: () => void;
    const started = new Promise<void>((r) => (running = r));
    let aborted: unknown;
    const lost = createRunner({
      store,
      workflows: [job],
      taskLeaseMs: LEASE,
      handlers: {
        work: async ({ signal }: HandlerContext) => {
          signal.addEventListener('abort', () => (aborted = signal.reason));
          running();
          await gate;
          return 'late';
        },
      },
    });
    await lost.start('job', 'cut-1', {}, { wait: 'write' });
    await started;
    cut.on = true; // from here its renewals fail: to the store it is dead
    const t0 = Date.now();
    const other = createRunner({
      store: shared,
      workflows: [job],
      taskLeaseMs: LEASE,
      handlers: { work: ({ attempt }: HandlerContext) => `attempt ${attempt}` },
    });
    let s: Snapshot | null = null;
    while (Date.now() - t0 < 5_000) {
      await other.processDue();
      s = await shared.load('cut-1');
      if (s?.status === 'completed') break;
      await sleep(50);
    }
    expect(s?.status).toBe('completed');
    expect(s?.steps.work).toMatchObject({ attempt: 2, output: 'attempt 2' });
    expect(s?.log.find((e) => e.type === 'task.failed')?.detail).toMatch(/^LEASE_LOST: /);
    // Found once the lease lapsed (rounded up to the second by the store's index), not at the 300 s deadline.
    expect(Date.now() - t0).toBeLessThan(2_500);
    // Back in touch, its next renewal reads the attempt gone: the handler's signal fires.
    cut.on = false;
    await expect.poll(() => aborted !== undefined, { timeout: 2_000 }).toBe(true);
    release();
    await lost.idle();
    const end = await shared.load('cut-1');
    expect(end?.version).toBe(s?.version);
    expect(end?.steps.work?.output).toBe('attempt 2');
  });

  it('takes taskLeaseMs as an integer of at least 100 ms, else INVALID_OPTIONS', () => {
    for (const taskLeaseMs of [0, 99, 1.5, Number.NaN]) {
      let error: unknown;
      try {
        createRunner({
          store: createMemoryStore(),
          workflows: [job],
          handlers: { work: () => 1 },
          taskLeaseMs,
        });
      } catch (e) {
        error = e;
      }
      expect(isStepfoldError(error, 'INVALID_OPTIONS'), String(taskLeaseMs)).toBe(true);
    }
  });
});

describe('a worker and the leases', () => {
  it('polls every third of its runner’s lease at most while wakes are live, so a lapsed one is found', async () => {
    const store = createMemoryStore();
    const runner = createRunner({ store, workflows: [job], taskLeaseMs: 600, handlers: { work: () => 1 } });
    const worker = createWorker({ runner, poll: { minMs: 10, maxWithWakesMs: 60_000, jitter: 0 } });
    await worker.start();
    try {
      await sleep(100); // the pause has grown past its cap by now: 10, 20, 40, 80, then 200 each
      const before = worker.stats.polls;
      await sleep(1_000);
      // About five rounds in a second (a lane and the inbox's each), not one a minute.
      expect(worker.stats.polls - before).toBeGreaterThanOrEqual(3);
      expect(worker.stats.polls - before).toBeLessThanOrEqual(25);
    } finally {
      await worker.stop();
    }
  });
});
