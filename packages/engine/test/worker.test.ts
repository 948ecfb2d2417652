import {
  createMemoryStore,
  createRunner,
  createWorker,
  isStepfoldError,
  type Store,
  type WakeListener,
  type WakeSource,
  type WorkerEvents,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

const chain = workflow('chain', 1).task('a', { handler: 'a' }).task('b', { handler: 'b' }).build();
const flood = workflow('flood', 1).task('f', { handler: 'f' }).build();
const quiet = workflow('quiet', 1).task('q', { handler: 'q' }).build();
const nap = workflow('nap', 1).sleep('rest', { ms: 150 }).task('after', { handler: 'after' }).build();

/** A promise with its resolve, to hold handlers until a test lets them go. */
function gate() {
  let open: () => void = () => {};
  const p = new Promise<void>((r) => {
    open = r;
  });
  return { p, open };
}

/** Records the `limit` (and lane) of every listDue and claimDue call. */
function recordingLimits(store: Store, limits: number[], lanes: Array<string | undefined> = []): Store {
  return Object.assign(Object.create(store) as Store, {
    listDue: (now: number, limit: number, q?: { workflow?: string }) => {
      limits.push(limit);
      lanes.push(q?.workflow);
      return store.listDue(now, limit, q);
    },
    claims: {
      ...store.claims!,
      claimDue: (now: number, limit: number, q?: { workflow?: string; ids?: readonly string[] }) => {
        limits.push(limit);
        lanes.push(q?.workflow);
        return store.claims!.claimDue(now, limit, q);
      },
    },
  });
}

describe('createWorker', () => {
  it("start with wait: 'write' answers after one write; the worker runs the handlers", async () => {
    const store = createMemoryStore();
    const held = gate();
    const runner = createRunner({
      store,
      workflows: [chain],
      handlers: { a: async () => held.p.then(() => 'A'), b: () => 'B' },
    });
    const worker = createWorker({ runner, concurrency: 4 });
    await worker.start();
    const s = await runner.client(chain).start('c-1', undefined, { wait: 'write' });
    expect(s.version).toBe(1);
    expect(s.status).toBe('running');
    expect(worker.stats.running).toBe(1);
    held.open();
    await worker.idle();
    expect((await store.load('c-1'))!.status).toBe('completed');
    expect(worker.stats.completed).toBe(2);
    await worker.stop();
  });

  it('never runs more than `concurrency` handlers and asks listDue for no more than its free slots', async () => {
    const limits: number[] = [];
    const store = recordingLimits(createMemoryStore(), limits);
    const api = createRunner({ store, workflows: [flood], handlers: { f: () => null }, execute: false });
    for (let i = 0; i < 30; i++) await api.start('flood', `f-${i}`);
    let now = 0;
    let most = 0;
    const runner = createRunner({
      store,
      workflows: [flood],
      handlers: {
        f: async () => {
          now++;
          most = Math.max(most, now);
          await new Promise((r) => setTimeout(r, 5));
          now--;
        },
      },
    });
    const lags: number[] = [];
    const lagged = new Set<string>();
    const worker = createWorker({
      runner,
      concurrency: 5,
      poll: { minMs: 5 },
      on: {
        lag: (ms, _id, workflow) => {
          lags.push(ms);
          lagged.add(workflow);
        },
      },
    });
    await worker.start();
    await worker.idle();
    await worker.stop();
    expect(most).toBe(5);
    expect(limits.length).toBeGreaterThan(0);
    expect(Math.max(...limits)).toBeLessThanOrEqual(5);
    const done = await store.list({ limit: 100, status: 'completed' });
    expect(done.items).toHaveLength(30);
    // Every handed-off start was claimed and ticked once; the lag is how late those ticks were.
    expect(worker.stats).toMatchObject({ claimed: 30, ticks: 30, completed: 30, failed: 0, conflicts: 0 });
    expect(worker.stats.maxLagMs).toBeGreaterThanOrEqual(worker.stats.lastLagMs);
    expect(lags).toHaveLength(30);
    // Each lag names the workflow of the instance ticked (what a metric groups lag by).
    expect([...lagged]).toEqual(['flood']);
  });

  it('a flooded workflow at its cap does not hold back another workflow', async () => {
    const store = createMemoryStore();
    const api = createRunner({
      store,
      workflows: [flood, quiet],
      handlers: { f: () => null, q: () => null },
      execute: false,
    });
    for (let i = 0; i < 40; i++) await api.start('flood', `fl-${String(i).padStart(2, '0')}`);
    await api.start('quiet', 'q-1');
    const order: string[] = [];
    const runner = createRunner({
      store,
      workflows: [flood, quiet],
      handlers: {
        f: async ({ instanceId }) => {
          order.push(instanceId);
          await new Promise((r) => setTimeout(r, 2));
        },
        q: ({ instanceId }) => {
          order.push(instanceId);
        },
      },
    });
    const worker = createWorker({
      runner,
      concurrency: 2,
      workflowConcurrency: { flood: 1 },
      poll: { minMs: 5 },
    });
    await worker.start();
    await worker.idle();
    await worker.stop();
    expect(order).toHaveLength(41);
    // The quiet workflow's one instance ran among the first few, not after the flood.
    expect(order.indexOf('q-1')).toBeLessThan(3);
  });

  it("lanes: 'single' polls once per round for every workflow, and still runs them all", async () => {
    const limits: number[] = [];
    const lanes: Array<string | undefined> = [];
    const store = recordingLimits(createMemoryStore(), limits, lanes);
    const api = createRunner({
      store,
      workflows: [flood, quiet],
      handlers: { f: () => 1, q: () => 2 },
      execute: false,
    });
    for (let i = 0; i < 5; i++) await api.start('flood', `sf-${i}`);
    await api.start('quiet', 'sq-1');
    const runner = createRunner({ store, workflows: [flood, quiet], handlers: { f: () => 1, q: () => 2 } });
    const worker = createWorker({ runner, lanes: 'single', concurrency: 3, poll: { minMs: 5 } });
    await worker.start();
    await worker.idle();
    await worker.stop();
    expect((await store.list({ limit: 10, status: 'completed' })).items).toHaveLength(6);
    expect(new Set(lanes)).toEqual(new Set([undefined]));
    expect(limits.length).toBeGreaterThan(0);
    expect(Math.max(...limits)).toBeLessThanOrEqual(3);
  });

  it('sleeps until the earliest wake time it wrote: a timer fires without a nudge', async () => {
    const store = createMemoryStore();
    const runner = createRunner({ store, workflows: [nap], handlers: { after: () => 'up' } });
    // Polling alone would wait a minute: only the known wake time can bring the timer in.
    const worker = createWorker({ runner, wakes: false, poll: { minMs: 60_000, maxMs: 60_000 } });
    await worker.start();
    const s = await runner.start('nap', 'n-1', undefined, { wait: 'write' });
    expect(s.status).toBe('waiting');
    await expect.poll(async () => (await store.load('n-1'))!.status, { timeout: 10_000 }).toBe('completed');
    await worker.stop();
  });

  it("follows the store's wake notices: another runner's handed-off start is taken without polling", async () => {
    const store = createMemoryStore();
    const wakes: number[] = [];
    const runner = createRunner({ store, workflows: [chain], handlers: { a: () => 'A', b: () => 'B' } });
    const worker = createWorker({
      runner,
      poll: { minMs: 60_000, maxMs: 60_000, maxWithWakesMs: 60_000 },
      on: { wake: (h) => wakes.push(h.at) },
    });
    await worker.start();
    await new Promise((r) => setTimeout(r, 20)); // the first round has run and the worker sleeps
    const api = createRunner({
      store,
      workflows: [chain],
      handlers: { a: () => 'x', b: () => 'y' },
      execute: false,
    });
    const s = await api.start('chain', 'w-1');
    expect(s.tasks.a?.queued).toBe(true);
    await expect.poll(async () => (await store.load('w-1'))!.status, { timeout: 10_000 }).toBe('completed');
    expect(wakes.length).toBeGreaterThan(0);
    expect((await store.load('w-1'))!.output).toBe('B');
    await worker.stop();
  });

  it('takes a task a notice hands over from the snapshot it carries: no claim, no load; of a fleet of two one takes it, the other finds it taken', async () => {
    const store = createMemoryStore();
    const calls: string[] = [];
    const spy = Object.create(store) as Store;
    for (const m of ['load', 'listDue'] as const) {
      Object.defineProperty(spy, m, {
        value: (...a: unknown[]) => {
          calls.push(m);
          return (store[m] as (...x: unknown[]) => Promise<unknown>)(...a);
        },
      });
    }
    Object.defineProperty(spy, 'claims', {
      value: {
        ...store.claims!,
        claimDue: (...a: Parameters<NonNullable<Store['claims']>['claimDue']>) => {
          calls.push('claimDue');
          return store.claims!.claimDue(...a);
        },
      },
    });
    let lostWrites = 0;
    Object.defineProperty(spy, 'save', {
      value: (...a: Parameters<Store['save']>) =>
        store.save(...a).catch((e) => {
          if (isStepfoldError(e, 'VERSION_CONFLICT')) lostWrites++;
          throw e;
        }),
    });
    const ran: string[] = [];
    const slow = { minMs: 60_000, maxMs: 60_000, maxWithWakesMs: 60_000 };
    const workers = [0, 1].map((index) =>
      createWorker({
        runner: createRunner({
          store: spy,
          workflows: [flood],
          handlers: { f: ({ instanceId }) => void ran.push(instanceId) },
        }),
        poll: slow,
        fleet: { index, size: 2 },
      }),
    );
    for (const w of workers) await w.start();
    await new Promise((r) => setTimeout(r, 20)); // the first rounds have run; both sleep
    calls.length = 0;
    const api = createRunner({ store, workflows: [flood], handlers: { f: () => null }, execute: false });
    const ids = Array.from({ length: 10 }, (_, i) => `h-${i}`);
    for (const id of ids) await api.start('flood', id);
    await expect
      .poll(async () => Promise.all(ids.map(async (id) => (await store.load(id))!.status)), {
        timeout: 10_000,
      })
      .toEqual(ids.map(() => 'completed'));
    expect([...ran].sort()).toEqual([...ids].sort());
    const stats = workers.map((w) => w.stats);
    expect(stats[0]!.ticks + stats[1]!.ticks).toBe(ids.length);
    // Both heard every notice; the one whose turn it was took it from the snapshot (no claim, no
    // load), the other stood by, then found it taken with one claim by id: no write lost a race.
    await expect.poll(() => stats[0]!.lostTakes + stats[1]!.lostTakes).toBe(ids.length);
    expect(calls).toEqual(ids.map(() => 'claimDue'));
    expect(lostWrites).toBe(0);
    // The id's hash shares the instances out.
    expect(Math.min(stats[0]!.ticks, stats[1]!.ticks)).toBeGreaterThan(0);
    for (const w of workers) await w.stop();
  });

  it('without a fleet, workers that lose a take start standing by: write races stop after the first', async () => {
    const store = createMemoryStore();
    let lostWrites = 0;
    const spy = Object.assign(Object.create(store) as Store, {
      save: (...a: Parameters<Store['save']>) =>
        store.save(...a).catch((e) => {
          if (isStepfoldError(e, 'VERSION_CONFLICT')) lostWrites++;
          throw e;
        }),
    });
    const ran: string[] = [];
    const slow = { minMs: 60_000, maxMs: 60_000, maxWithWakesMs: 60_000 };
    const workers = [0, 1, 2].map(() =>
      createWorker({
        runner: createRunner({
          store: spy,
          workflows: [flood],
          handlers: { f: ({ instanceId }) => void ran.push(instanceId) },
        }),
        poll: slow,
      }),
    );
    for (const w of workers) await w.start();
    await new Promise((r) => setTimeout(r, 20));
    const api = createRunner({ store, workflows: [flood], handlers: { f: () => null }, execute: false });
    const ids = Array.from({ length: 30 }, (_, i) => `a-${i}`);
    for (const id of ids) {
      await api.start('flood', id);
      // One at a time: the notice of each is heard after the last one was settled.
      await expect.poll(async () => (await store.load(id))!.status).toBe('completed');
    }
    expect([...ran].sort()).toEqual([...ids].sort());
    // The first notice is raced by all three (two lose); from then on they take turns.
    expect(lostWrites).toBeLessThanOrEqual(2);
    const lost = workers.reduce((n, w) => n + w.stats.lostTakes, 0);
    await expect
      .poll(() => workers.reduce((n, w) => n + w.stats.lostTakes, 0))
      .toBeGreaterThanOrEqual(ids.length);
    expect(lost).toBeLessThanOrEqual(2 * ids.length);
    for (const w of workers) await w.stop();
  });

  it('with handoffSnapshots: false, a hand-off is claimed by id and read from the store, whatever the notice carries', async () => {
    const store = createMemoryStore();
    const calls: string[] = [];
    const spy = Object.assign(Object.create(store) as Store, {
      claims: {
        ...store.claims!,
        claimDue: (now: number, limit: number, q?: { ids?: readonly string[] }) => {
          calls.push(`claimDue ${q?.ids?.join(',') ?? '*'}`);
          return store.claims!.claimDue(now, limit, q);
        },
      },
    });
    // A wake source anyone could send on: this notice carries a forged snapshot.
    let listener: WakeListener | undefined;
    const wakes: WakeSource = {
      async subscribe(l) {
        listener = l;
        return { close: async () => {} };
      },
    };
    const ran: unknown[] = [];
    const worker = createWorker({
      runner: createRunner({
        store: spy,
        workflows: [flood],
        handlers: { f: ({ workflowInput }) => void ran.push(workflowInput) },
      }),
      poll: { minMs: 60_000, maxMs: 60_000, maxWithWakesMs: 60_000 },
      wakes,
      handoffSnapshots: false,
    });
    await worker.start();
    await new Promise((r) => setTimeout(r, 20));
    calls.length = 0;
    const api = createRunner({ store, workflows: [flood], handlers: { f: () => null }, execute: false });
    const real = await api.start('flood', 'claimed-1', { real: true });
    const forged = { ...real, input: { forged: true } };
    listener!.wake({ at: real.wakeAt!, workflow: 'flood', id: 'claimed-1', snapshot: forged });
    await expect.poll(async () => (await store.load('claimed-1'))!.status).toBe('completed');
    expect(calls).toEqual(['claimDue claimed-1']);
    expect(ran).toEqual([{ real: true }]);
    expect((await store.load('claimed-1'))!.input).toEqual({ real: true });
    await worker.stop();
  });

  it('named instances left for want of a slot are taken as slots free, not at the next planned poll', async () => {
    const store = createMemoryStore();
    const ran: string[] = [];
    const runner = createRunner({
      store,
      workflows: [flood],
      handlers: {
        f: async ({ instanceId }) => {
          await new Promise((r) => setTimeout(r, 5));
          ran.push(instanceId);
        },
      },
    });
    // Two slots, and a planned poll a minute away: only notices and freed slots can drive it.
    const worker = createWorker({
      runner,
      concurrency: 2,
      poll: { minMs: 60_000, maxMs: 60_000, maxWithWakesMs: 60_000 },
    });
    await worker.start();
    await new Promise((r) => setTimeout(r, 20));
    const api = createRunner({ store, workflows: [flood], handlers: { f: () => null }, execute: false });
    const ids = Array.from({ length: 12 }, (_, i) => `slot-${i}`);
    await Promise.all(ids.map((id) => api.start('flood', id)));
    await expect.poll(() => ran.length, { timeout: 5_000 }).toBe(ids.length);
    expect([...ran].sort()).toEqual([...ids].sort());
    // The first round's only (its lane and the inbox's lane): the rest came from the notices.
    expect(worker.stats.polls).toBe(2);
    await worker.stop();
  });

  it('skips instances it cannot step (unknown version), gives their claims back, and still runs the rest', async () => {
    const store = createMemoryStore();
    const v9 = workflow('flood', 9).task('f', { handler: 'f' }).build();
    const other = createRunner({ store, workflows: [v9], handlers: { f: () => null }, execute: false });
    for (let i = 0; i < 20; i++) await other.start('flood', `v9-${String(i).padStart(2, '0')}`);
    const api = createRunner({ store, workflows: [flood], handlers: { f: () => null }, execute: false });
    await api.start('flood', 'zz-v1');
    const skipped = new Set<string>();
    const runner = createRunner({ store, workflows: [flood], handlers: { f: () => null } });
    const worker = createWorker({
      runner,
      concurrency: 2,
      poll: { minMs: 5 },
      on: { skipped: (id, e) => isStepfoldError(e, 'UNKNOWN_VERSION') && skipped.add(id) },
    });
    await worker.start();
    await expect.poll(async () => (await store.load('zz-v1'))!.status, { timeout: 10_000 }).toBe('completed');
    await worker.stop();
    expect(skipped.size).toBe(20);
    // Their claims were given back: a runner that knows v9 takes them at once.
    const v9runner = createRunner({ store, workflows: [v9], handlers: { f: () => null } });
    expect((await v9runner.processDue(Date.now(), 50)).length).toBe(20);
  });

  it('backs off while the store is down and carries on when it is back', async () => {
    const store = createMemoryStore();
    const api = createRunner({
      store,
      workflows: [chain],
      handlers: { a: () => 1, b: () => 2 },
      execute: false,
    });
    await api.start('chain', 'o-1');
    const errors: Array<Parameters<WorkerEvents['error']>> = [];
    store.setAvailable(false);
    const runner = createRunner({ store, workflows: [chain], handlers: { a: () => 1, b: () => 2 } });
    const worker = createWorker({ runner, poll: { minMs: 5 }, on: { error: (...a) => errors.push(a) } });
    await worker.start();
    const polls = () => errors.filter(([, where]) => where === 'poll');
    await expect.poll(() => polls().length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    expect(errors.every(([e]) => isStepfoldError(e, 'STORE_UNAVAILABLE'))).toBe(true);
    // The wake subscription failed too and is retried: notices resume once the store is back.
    expect(errors.some(([, where]) => where === 'wake')).toBe(true);
    store.setAvailable(true);
    await expect.poll(async () => (await store.load('o-1'))!.status, { timeout: 30_000 }).toBe('completed');
    await worker.stop();
  });

  it('stop lets running handlers finish, then fires their AbortSignal after the grace', async () => {
    const store = createMemoryStore();
    const seen: string[] = [];
    const quick = gate();
    const runner = createRunner({
      store,
      workflows: [flood, quiet],
      handlers: {
        // Finishes within the grace.
        q: async () => {
          await quick.p;
          seen.push('quick done');
        },
        // Runs until aborted.
        f: ({ signal }) =>
          new Promise((_, reject) =>
            signal.addEventListener('abort', () => {
              seen.push('aborted');
              reject(new Error('aborted'));
            }),
          ),
      },
    });
    const stopped: Array<Parameters<WorkerEvents['stopped']>[0]> = [];
    const worker = createWorker({ runner, on: { stopped: (i) => stopped.push(i) } });
    await worker.start();
    await runner.start('quiet', 'q-1', undefined, { wait: 'write' });
    await runner.start('flood', 'f-1', undefined, { wait: 'write' });
    expect(worker.stats.running).toBe(2);
    const stopping = worker.stop({ graceMs: 100, abortMs: 5_000 });
    quick.open();
    await stopping;
    expect(seen).toEqual(['quick done', 'aborted']);
    expect(stopped).toEqual([{ aborted: 1, dropped: 0, released: 0 }]);
    expect((await store.load('q-1'))!.status).toBe('completed');
  });

  it('stop gives back the tasks it never started, so another worker runs them at once as the same attempt', async () => {
    const store = createMemoryStore();
    const held = gate();
    const attempts: string[] = [];
    const handlers = (who: string) => ({
      a: async ({ instanceId, attempt }: { instanceId: string; attempt: number }) => {
        attempts.push(`${who} ${instanceId} a#${attempt}`);
        if (who === 'A' && instanceId === 'c-1') await held.p;
        return 'A';
      },
      b: ({ instanceId, attempt }: { instanceId: string; attempt: number }) => {
        attempts.push(`${who} ${instanceId} b#${attempt}`);
        return 'B';
      },
    });
    const stopped: Array<Parameters<WorkerEvents['stopped']>[0]> = [];
    const runnerA = createRunner({ store, workflows: [chain], handlers: handlers('A') });
    const a = createWorker({ runner: runnerA, concurrency: 1, on: { stopped: (i) => stopped.push(i) } });
    await a.start();
    // c-1's first task runs (and is held); c-2's waits for the only slot.
    await runnerA.start('chain', 'c-1', undefined, { wait: 'write' });
    await runnerA.start('chain', 'c-2', undefined, { wait: 'write' });
    expect(a.stats).toMatchObject({ running: 1, queued: 1 });
    const stopping = a.stop({ graceMs: 5_000 });
    // Finishes within the grace: its result dispatches `b`, which this worker will not start either.
    held.open();
    await stopping;
    expect(stopped).toEqual([{ aborted: 0, dropped: 0, released: 2 }]);
    const c1 = (await store.load('c-1'))!;
    const c2 = (await store.load('c-2'))!;
    // Queued for any worker, due now: not at their deadline five minutes on.
    expect(c1.tasks.b).toMatchObject({ attempt: 1, queued: true });
    expect(c2.tasks.a).toMatchObject({ attempt: 1, queued: true });
    expect(c1.log.some((e) => e.type === 'task.released' && e.step === 'b')).toBe(true);
    expect(c2.wakeAt).toBeLessThanOrEqual(Date.now());

    const runnerB = createRunner({ store, workflows: [chain], handlers: handlers('B') });
    const b = createWorker({ runner: runnerB, concurrency: 2 });
    await b.start();
    await expect
      .poll(async () => [(await store.load('c-1'))!.status, (await store.load('c-2'))!.status], {
        timeout: 5_000,
      })
      .toEqual(['completed', 'completed']);
    await b.stop();
    expect(attempts.sort()).toEqual(['A c-1 a#1', 'B c-1 b#1', 'B c-2 a#1', 'B c-2 b#1']);
  });

  it('a job that waited until its deadline was near is given back, not lost: it runs as the same attempt', async () => {
    const tight = workflow('tight', 1).task('t', { handler: 't', timeoutMs: 1_500 }).build();
    const store = createMemoryStore();
    const ran: string[] = [];
    const runner = createRunner({
      store,
      workflows: [tight],
      handlers: {
        t: async ({ instanceId, attempt }) => {
          ran.push(`${instanceId}#${attempt}`);
          // The first run keeps the only slot until the second job's deadline is under a second away.
          if (instanceId === 'x-1') await new Promise((r) => setTimeout(r, 700));
          return null;
        },
      },
    });
    const worker = createWorker({ runner, concurrency: 1, startMarginMs: 1_000 });
    await worker.start();
    await runner.start('tight', 'x-1', undefined, { wait: 'write' });
    await runner.start('tight', 'x-2', undefined, { wait: 'write' });
    expect(worker.stats).toMatchObject({ running: 1, queued: 1 });
    await expect.poll(async () => (await store.load('x-2'))!.status, { timeout: 5_000 }).toBe('completed');
    await worker.stop();
    expect(ran).toEqual(['x-1#1', 'x-2#1']);
    expect(worker.stats).toMatchObject({ released: 1, dropped: 0 });
    const x2 = (await store.load('x-2'))!;
    expect(x2.steps.t!.attempt).toBe(1);
    expect(x2.log.map((e) => e.type)).toContain('task.released');
  });
});
