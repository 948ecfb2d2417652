import {
  createMemoryStore,
  createRunner,
  defineWorkflow,
  type FlowStore,
  flowControl,
  isStepfoldError,
  type Snapshot,
  type Store,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it, vi } from 'vitest';
import { FlowCounter } from '../src/testing/flow-counter.js';

// The runner's write path with flow limits: acquired before the save, refused as a throttled
// attempt in the same write, released after, and a freed slot ticks its waiter at once. The store
// here is the memory store with the reference counts (the harness's) as its `flow`.

/** The reference counts as an async FlowStore, recording each holder's first grant (holder, time). */
function referenceFlow(): {
  flow: FlowStore;
  counter: FlowCounter;
  grants: Array<{ holder: string; at: number }>;
} {
  const counter = new FlowCounter();
  const grants: Array<{ holder: string; at: number }> = [];
  const flow: FlowStore = {
    acquire: async (holder, instance, needs, now, until) => {
      const g = counter.acquire(holder, instance, needs, now, until);
      // A holder acquiring again (a write re-applied after a lost race) holds what it held.
      if (g.granted && !grants.some((x) => x.holder === holder)) grants.push({ holder, at: now });
      return g;
    },
    release: async (holders, now) => counter.release(holders, now),
    renew: async (holders, until) => counter.renew(holders, until),
    list: async (q) => counter.list(q),
  };
  return { flow, counter, grants };
}

function limitedStore(): {
  store: Store;
  counter: FlowCounter;
  grants: Array<{ holder: string; at: number }>;
} {
  const { flow, counter, grants } = referenceFlow();
  return { store: { ...createMemoryStore(), flow }, counter, grants };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const perCustomer = workflow('per-customer', 1)
  .input<{ customer: string; n: number }>()
  .task('work', { handler: 'work', concurrency: { key: 'input.customer', limit: 1 } })
  .build();

/**
 * Five instances of one customer on `store` under a limit of 1: the most handlers that ran at once,
 * after every instance completed.
 */
async function fiveOfOneKey(store: Store, prefix: string): Promise<number> {
  let running = 0;
  let most = 0;
  const runner = createRunner({
    kinds: [flowControl],
    store,
    workflows: [perCustomer],
    handlers: {
      work: async ({ input }: { input: { n: number } }) => {
        running++;
        most = Math.max(most, running);
        await sleep(5);
        running--;
        return input.n;
      },
    },
  });
  const ids = [0, 1, 2, 3, 4].map((n) => `${prefix}-${n}`);
  await Promise.all(ids.map((id, n) => runner.start('per-customer', id, { customer: 'acme', n })));
  await vi.waitFor(
    async () => {
      for (const id of ids) expect((await runner.get(id))?.status).toBe('completed');
    },
    { timeout: 5000, interval: 20 },
  );
  return most;
}

describe('runner with flow limits', () => {
  it('a limit of 1: five instances of one key never run two handlers at once, and all finish', async () => {
    const { store, counter } = limitedStore();
    expect(await fiveOfOneKey(store, 'c')).toBe(1);
    // Nothing leaks: every hold and waiter entry is gone.
    await vi.waitFor(() => expect(counter.list({ limit: 100, now: Date.now() }).items).toEqual([]));
  });

  it("on the memory store's own flow: one handler at a time per key, every instance finished, nothing left", async () => {
    const store = createMemoryStore();
    expect(await fiveOfOneKey(store, 'm')).toBe(1);
    await vi.waitFor(async () =>
      expect((await store.flow!.list({ limit: 100, now: Date.now() })).items).toEqual([]),
    );
  });

  it('a refused attempt is visible as throttled (key, limit, until), and a released slot wakes it at once', async () => {
    const { store } = limitedStore();
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const runner = createRunner({
      kinds: [flowControl],
      store,
      workflows: [perCustomer],
      handlers: {
        work: async ({ input }: { input: { n: number } }) => {
          if (input.n === 0) await gate;
          return input.n;
        },
      },
    });
    const first = runner.start('per-customer', 'a', { customer: 'acme', n: 0 });
    await vi.waitFor(async () => expect((await runner.get('a'))?.tasks['work']).toBeDefined());
    const before = Date.now();
    const second = await runner.start('per-customer', 'b', { customer: 'acme', n: 1 });
    expect(second.status).toBe('waiting');
    expect(second.tasks).toEqual({});
    const throttled = second.steps['work']!.throttled!;
    expect(throttled.need).toEqual({ scope: 'per-customer/work', key: 'acme', limit: 1 });
    // When the holder's attempt lease (10 s, renewed while it runs) would lapse, before the 30 s poll
    // fallback: only a release wakes it sooner.
    const held = (await runner.get('a'))!.tasks['work']!.leaseUntil!;
    expect(throttled.until).toBe(held);
    expect(throttled.until).toBeGreaterThanOrEqual(before + 10_000 - 1_000);
    expect(throttled.until).toBeLessThanOrEqual(Date.now() + 30_000);
    expect(second.wakeAt).toBe(throttled.until);
    open();
    await first;
    await vi.waitFor(async () => expect((await runner.get('b'))?.status).toBe('completed'), {
      timeout: 2000,
      interval: 10,
    });
    expect((await runner.get('b'))?.steps['work']?.throttled).toBeUndefined();
  });

  it('a rate limit never lets more than `limit` attempts start in any window', async () => {
    const { store, grants } = limitedStore();
    const rated = workflow('rated', 1)
      .task('call', { handler: 'call', rateLimit: { limit: 2, periodMs: 150 } })
      .build();
    const runner = createRunner({
      kinds: [flowControl],
      store,
      workflows: [rated],
      handlers: { call: async () => 1 },
    });
    const ids = [0, 1, 2, 3, 4, 5].map((n) => `r-${n}`);
    await Promise.all(ids.map((id) => runner.start('rated', id)));
    // Nothing frees a rate window: the throttled ones are found by polling, as a worker does.
    await vi.waitFor(
      async () => {
        await runner.processDue();
        for (const id of ids) expect((await runner.get(id))?.status).toBe('completed');
      },
      { timeout: 5000, interval: 25 },
    );
    const starts = grants.map((g) => g.at).sort((a, b) => a - b);
    expect(starts).toHaveLength(6);
    for (let i = 2; i < starts.length; i++) expect(starts[i]! - starts[i - 2]!).toBeGreaterThanOrEqual(150);
  });

  it('instance limits: an instance waits for admission, and the end of one admits the next', async () => {
    const { store } = limitedStore();
    const one = workflow('one-at-a-time', 1, { concurrency: { key: 'input.tenant', limit: 1 } })
      .input<{ tenant: string }>()
      .wait('hold', { signal: 'go' })
      .build();
    const runner = createRunner({ kinds: [flowControl], store, workflows: [one], handlers: {} });
    const a = await runner.start('one-at-a-time', 'a', { tenant: 't' });
    expect(a.holds).toEqual([{ scope: 'one-at-a-time', key: 't', limit: 1 }]);
    expect(a.active).toEqual(['hold']);
    const b = await runner.start('one-at-a-time', 'b', { tenant: 't' });
    expect(b.admission?.throttled?.need).toEqual({ scope: 'one-at-a-time', key: 't', limit: 1 });
    expect(b.steps).toEqual({});
    await runner.signal('a', 'go', 1);
    await vi.waitFor(async () => expect((await runner.get('b'))?.active).toEqual(['hold']), {
      timeout: 2000,
      interval: 10,
    });
  });

  it('a save that fails gives back what the write took', async () => {
    const { store, counter } = limitedStore();
    let fail = true;
    const flaky: Store = {
      ...store,
      create: async (s: Snapshot) => {
        if (fail) {
          fail = false;
          throw Object.assign(new Error('down'), { code: 'STORE_UNAVAILABLE' });
        }
        return store.create(s);
      },
    };
    const runner = createRunner({
      kinds: [flowControl],
      store: flaky,
      workflows: [perCustomer],
      handlers: { work: async () => 1 },
    });
    await expect(runner.start('per-customer', 'x', { customer: 'acme', n: 0 })).rejects.toThrow('down');
    await vi.waitFor(() => expect(counter.list({ limit: 10, now: Date.now() }).items).toEqual([]));
    // The slot is free: the next instance of the key runs.
    const s = await runner.start('per-customer', 'y', { customer: 'acme', n: 1 });
    expect(s.status).toBe('completed');
  });

  it('limits on a store without flow are refused at createRunner with INVALID_OPTIONS', () => {
    // Whatever the memory store brings, this one has no flow.
    const { flow: _, ...plain } = createMemoryStore() as Store;
    let error: unknown;
    try {
      createRunner({
        kinds: [flowControl],
        store: plain,
        workflows: [perCustomer],
        handlers: { work: async () => 1 },
      });
    } catch (e) {
      error = e;
    }
    expect(isStepfoldError(error, 'INVALID_OPTIONS')).toBe(true);
    expect(String((error as Error).message)).toMatch(/step work of workflow per-customer v1 has flow limits/);
    const unlimited = defineWorkflow({
      name: 'u',
      version: 1,
      start: 't',
      steps: { t: { kind: 'task', handler: 'h' } },
    });
    expect(() =>
      createRunner({
        kinds: [flowControl],
        store: plain,
        workflows: [unlimited],
        handlers: { h: async () => 1 },
      }),
    ).not.toThrow();
  });
});
