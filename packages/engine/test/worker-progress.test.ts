import {
  createMemoryStore,
  createRunner,
  createWorker,
  MAX_GIVE_BACKS,
  type Snapshot,
  type Store,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// The worker always makes progress on a slow store: every call of the store below answers `ms`
// late, so a claim, a load and a write together take longer than the worker's start margin. The
// worker used to give back every run whose deadline was under the margin away, even one that never
// waited for a slot; counted from the poll, that was every run, handed round for ever.

/** `store` with every method answering `ms` late (its wake notices too). */
function slowStore(store: Store, ms: number): Store {
  const late = <T>(v: T) => new Promise<T>((r) => setTimeout(() => r(v), ms));
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (key === 'wakes' && value)
        return {
          subscribe: (l: Parameters<NonNullable<Store['wakes']>['subscribe']>[0]) =>
            target.wakes!.subscribe({ ...l, wake: (h) => void late(h).then((x) => l.wake(x)) }),
        };
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        await late(undefined);
        const out = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        return late(out);
      };
    },
  });
}

const chain = workflow('slow-chain', 1, { defaults: { timeoutMs: 800 } })
  .task('a', { handler: 'a' })
  .task('b', { handler: 'b' })
  .task('c', { handler: 'c' })
  .build();

/** Most give-backs of any one attempt, from the instance's log. */
function mostGiveBacks(s: Snapshot): number {
  const per = new Map<string, number>();
  for (const e of s.log)
    if (e.type === 'task.released') {
      const k = `${e.step}#${(e as { attempt?: number }).attempt}`;
      per.set(k, (per.get(k) ?? 0) + 1);
    }
  return Math.max(0, ...per.values());
}

describe('the worker on a slow store', () => {
  for (const mode of ['hand-offs', 'own writes'] as const) {
    it(`finishes every instance when each store call takes longer than the start margin allows (${mode})`, async () => {
      const base = createMemoryStore();
      // 60 ms a call, each way: a claim, a load or a write is ~120 ms, a take and its result's
      // write ~240 ms, and the margin leaves a run 800 - 700 = 100 ms to spare after its take.
      const store = slowStore(base, 60);
      const runner = createRunner({
        store,
        workflows: [chain],
        handlers: { a: () => 'A', b: () => 'B', c: () => 'C' },
      });
      const worker = createWorker({
        runner,
        concurrency: 2,
        startMarginMs: 700,
        poll: { minMs: 20, maxMs: 200, maxWithWakesMs: 200 },
      });
      await worker.start();
      // Hand-offs: a runner that runs no handlers starts them (tasks queued for any worker);
      // own writes: the worker's runner starts them, its write dispatching the first task.
      const starter =
        mode === 'hand-offs'
          ? createRunner({
              store,
              workflows: [chain],
              handlers: { a: () => 0, b: () => 0, c: () => 0 },
              execute: false,
            })
          : runner;
      const ids = Array.from({ length: 8 }, (_, i) => `slow-${mode === 'hand-offs' ? 'h' : 'o'}-${i}`);
      await Promise.all(ids.map((id) => starter.start('slow-chain', id, undefined, { wait: 'write' })));
      await expect
        .poll(async () => (await Promise.all(ids.map((id) => base.load(id)))).map((s) => s!.status), {
          timeout: 30_000,
          interval: 250,
        })
        .toEqual(ids.map(() => 'completed'));
      await worker.stop();
      const finals = await Promise.all(ids.map(async (id) => (await base.load(id))!));
      // Runs that waited for a slot may have been given back, a few times an attempt at most.
      for (const s of finals) expect(mostGiveBacks(s)).toBeLessThanOrEqual(MAX_GIVE_BACKS);
      expect(worker.stats.completed).toBeGreaterThanOrEqual(ids.length * 3);
    });
  }

  it('a run that waited for a slot is given back at most MAX_GIVE_BACKS times an attempt, then runs', async () => {
    const tight = workflow('tight-many', 1).task('t', { handler: 't', timeoutMs: 400 }).build();
    const store = createMemoryStore();
    const ran: string[] = [];
    const runner = createRunner({
      store,
      workflows: [tight],
      handlers: {
        t: async ({ instanceId, attempt }) => {
          ran.push(`${instanceId}#${attempt}`);
          await new Promise((r) => setTimeout(r, 50));
          return null;
        },
      },
    });
    // A margin above the timeout: every run that waits at all is too late by it.
    const worker = createWorker({ runner, concurrency: 1, startMarginMs: 1_000 });
    await worker.start();
    const ids = ['g-1', 'g-2', 'g-3'];
    for (const id of ids) await runner.start('tight-many', id, undefined, { wait: 'write' });
    await expect
      .poll(async () => (await Promise.all(ids.map((id) => store.load(id)))).map((s) => s!.status), {
        timeout: 10_000,
      })
      .toEqual(ids.map(() => 'completed'));
    await worker.stop();
    for (const id of ids) {
      const s = (await store.load(id))!;
      expect(mostGiveBacks(s)).toBeLessThanOrEqual(MAX_GIVE_BACKS);
      expect(s.steps.t!.attempt).toBe(1);
    }
    expect(worker.stats.released).toBeGreaterThan(0);
  });
});

describe('claims a killed worker leaves', () => {
  it("an instance claimed ahead of its timer by a worker that then dies is ticked by another once the worker's lease lapses, not the store's claimMs", async () => {
    const nap = workflow('lease-nap', 1)
      .sleep('rest', { ms: 400 })
      .task('after', { handler: 'after' })
      .build();
    const base = createMemoryStore({ claimMs: 60_000 });
    // Worker A's view of the store: once it has claimed the instance ahead of its timer, it hears
    // nothing more (as if SIGKILLed: no tick, no release).
    let dead = false;
    const reserved: string[] = [];
    const dying = <T extends object>(inner: T): T =>
      new Proxy(inner, {
        get(target, key, receiver) {
          const value = Reflect.get(target, key, receiver);
          if (key === 'claims' && value) return dying(value);
          if (typeof value !== 'function') return value;
          return async (...args: unknown[]) => {
            if (dead) return new Promise(() => {});
            const out = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            const ids = (args[2] as { ids?: string[] } | undefined)?.ids;
            if (key === 'claimDue' && ids && (out as unknown[]).length) {
              reserved.push(...ids);
              dead = true;
            }
            return out;
          };
        },
      });
    const forA = dying(base) as Store;
    const handlers = { after: () => 'done' };
    const a = createWorker({
      runner: createRunner({ store: forA, workflows: [nap], handlers }),
      claimLeaseMs: 300,
    });
    await a.start();
    const api = createRunner({ store: base, workflows: [nap], handlers, execute: false });
    await api.start('lease-nap', 'nap-1');
    await expect.poll(() => reserved, { timeout: 5_000 }).toEqual(['nap-1']);
    const b = createWorker({
      runner: createRunner({ store: base, workflows: [nap], handlers }),
      poll: { maxMs: 100 },
    });
    await b.start();
    // The store's own claim would hold it for a minute; the worker's lease ran 300 ms past the timer.
    await expect.poll(async () => (await base.load('nap-1'))!.status, { timeout: 10_000 }).toBe('completed');
    expect(b.stats.ticks).toBeGreaterThan(0);
    await b.stop();
    void a.stop({ graceMs: 0, abortMs: 0 });
  });
});
