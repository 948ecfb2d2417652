import {
  createMemoryStore,
  createTieredStore,
  type MemoryStore,
  makeTestSnapshot,
  type TieredStore,
} from '@stepfold/engine';
import { runStoreConformance } from '@stepfold/engine/conformance';
import { describe, expect, it } from 'vitest';
import { createRunner, defineWorkflow, type Snapshot, type Store } from '../src/index.js';

const tiered = (o: { minAgeMs?: number } = {}) =>
  createTieredStore({
    hot: createMemoryStore(),
    cold: createMemoryStore(),
    finishedAfterMs: 0,
    sleepingMs: 1000,
    minAgeMs: o.minAgeMs ?? 0,
  });

// The tiered store is one store to its callers: the whole suite, over two memory stores.
runStoreConformance({
  name: 'tiered (memory + memory)',
  createStore: () => tiered(),
  capabilities: ['claims', 'wakes'],
  outage: {
    createStore: () => tiered(),
    stop: async (s) => {
      for (const t of [(s as TieredStore).hot, (s as TieredStore).cold])
        (t as MemoryStore).setAvailable(false);
    },
    start: async (s) => {
      for (const t of [(s as TieredStore).hot, (s as TieredStore).cold])
        (t as MemoryStore).setAvailable(true);
    },
  },
});

const done = (id: string, patch: Partial<Snapshot> = {}) =>
  makeTestSnapshot(id, { status: 'completed', updatedAt: 1_000, ...patch });

describe('tiered store: options', () => {
  it('refuses one store given as both tiers (INVALID_OPTIONS), which would lose every create to ALREADY_EXISTS', () => {
    const one = createMemoryStore();
    expect(() => createTieredStore({ hot: one, cold: one })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('same store') }),
    );
  });
});

describe('tiered store: moves', () => {
  it('demotes finished and long-sleeping instances; keeps running, recent and busy ones; reads find both tiers', async () => {
    const t = createTieredStore({
      hot: createMemoryStore(),
      cold: createMemoryStore(),
      finishedAfterMs: 500,
      sleepingMs: 1000,
      minAgeMs: 100,
    });
    await t.create(done('old-done'));
    await t.create(done('new-done', { updatedAt: 1_900 }));
    await t.create(makeTestSnapshot('asleep', { status: 'waiting', wakeAt: 10_000, updatedAt: 1_000 }));
    await t.create(makeTestSnapshot('nap', { status: 'waiting', wakeAt: 2_500, updatedAt: 1_000 }));
    await t.create(makeTestSnapshot('forever', { status: 'waiting', wakeAt: null, updatedAt: 1_000 }));
    await t.create(makeTestSnapshot('running', { updatedAt: 0 }));
    const busyTask = {
      step: 's',
      phase: 'run' as const,
      attempt: 1,
      idempotencyKey: 'k',
      handler: 'h',
      dispatchedAt: 0,
      deadline: 9e12,
      dispatchVersion: 1,
    };
    await t.create(
      makeTestSnapshot('busy', { status: 'waiting', wakeAt: null, updatedAt: 0, tasks: { s: busyTask } }),
    );
    const r = await t.move({ now: 2_000, limit: 100 });
    expect(r).toEqual({ demoted: 3, skipped: 3, conflicts: 0 });
    const cold = (await t.cold.list({ limit: 100 })).items.map((s) => s.id);
    expect(cold).toEqual(['asleep', 'forever', 'old-done']);
    for (const id of cold) expect(await t.hot.load(id)).toBeNull();
    // One store to its readers: every id once, in order, from whichever tier holds it.
    const all = (await t.list({ limit: 100 })).items.map((s) => s.id);
    expect(all).toEqual(['asleep', 'busy', 'forever', 'nap', 'new-done', 'old-done', 'running']);
    const pages: string[] = [];
    for (let cursor: string | null = null; ; ) {
      const p = await t.list({ limit: 2, cursor });
      pages.push(...p.items.map((s) => s.id));
      cursor = p.cursor;
      if (cursor === null) break;
    }
    expect(pages).toEqual(all);
    expect((await t.load('old-done'))?.status).toBe('completed');
    expect(await t.listDue(20_000, 10)).toEqual(expect.arrayContaining(['asleep', 'nap']));
    await expect(t.create(done('old-done'))).rejects.toMatchObject({ code: 'ALREADY_EXISTS' });
  });

  it('a save promotes a cold instance: hot holds the new version, cold nothing; a stale save loses', async () => {
    const t = tiered();
    await t.create(done('p'));
    expect((await t.move({ now: 5_000 })).demoted).toBe(1);
    await expect(t.save(done('p', { version: 3 }), 2)).rejects.toMatchObject({ code: 'VERSION_CONFLICT' });
    await t.save(done('p', { version: 2, input: 'again' }), 1);
    expect(await t.cold.load('p')).toBeNull();
    expect(await t.hot.load('p')).toMatchObject({ version: 2, input: 'again' });
    await expect(t.save(done('p', { version: 2 }), 1)).rejects.toMatchObject({ code: 'VERSION_CONFLICT' });
  });

  it('writers racing to promote one cold version: exactly one wins, 50 rounds', async () => {
    const t = tiered();
    await t.create(done('r'));
    for (let round = 0; round < 50; round++) {
      expect((await t.move({ now: 1e12 })).demoted).toBe(1);
      const at = (await t.load('r'))!;
      const won = await Promise.all(
        Array.from({ length: 8 }, (_, w) =>
          t.save({ ...at, version: at.version + 1, input: { w } }, at.version).then(
            () => true,
            (e) => (e.code === 'VERSION_CONFLICT' ? false : Promise.reject(e)),
          ),
        ),
      );
      expect(won.filter(Boolean)).toHaveLength(1);
      expect(await t.cold.load('r')).toBeNull();
      expect((await t.hot.load('r'))?.version).toBe(at.version + 1);
    }
  });

  it('a write landing mid-demotion wins: the mover takes its cold copy back', async () => {
    const hot = createMemoryStore();
    const cold = createMemoryStore();
    let racing = true;
    // The writer saves right after the mover copied the instance to cold.
    const slowCold: Store = {
      ...cold,
      async create(s) {
        await cold.create(s);
        if (racing) {
          racing = false;
          await hot.save(done('m', { version: 2, input: 'moved on' }), 1);
        }
      },
    };
    const t = createTieredStore({ hot, cold: slowCold, finishedAfterMs: 0, minAgeMs: 0 });
    await t.create(done('m'));
    expect(await t.move({ now: 5_000 })).toEqual({ demoted: 0, skipped: 0, conflicts: 1 });
    expect(await cold.load('m')).toBeNull();
    expect(await t.load('m')).toMatchObject({ version: 2, input: 'moved on' });
  });

  it('ABA: a promotion that stalled past another promotion and demotion is taken back (VERSION_CONFLICT)', async () => {
    const hot = createMemoryStore();
    const cold = createMemoryStore();
    let stall: (() => Promise<void>) | undefined;
    // Writer A's hot create runs only after writer B promoted the instance and the mover demoted it again.
    const stallingHot: Store = {
      ...hot,
      async create(s) {
        const run = stall;
        stall = undefined;
        if (run) await run();
        return hot.create(s);
      },
    };
    const t = createTieredStore({ hot: stallingHot, cold, finishedAfterMs: 0, minAgeMs: 0 });
    await t.create(done('aba'));
    await t.move({ now: 5_000 });
    const loadedByA = (await t.load('aba'))!;
    stall = async () => {
      await t.save(done('aba', { version: 2, input: 'B' }), 1); // B promotes (stall is consumed: no recursion)
      expect((await t.move({ now: 5_000 })).demoted).toBe(1);
    };
    await expect(t.save({ ...loadedByA, version: 2, input: 'A' }, 1)).rejects.toMatchObject({
      code: 'VERSION_CONFLICT',
    });
    // B's history is the instance, in cold only; A's create was taken back.
    expect(await hot.load('aba')).toBeNull();
    expect(await t.load('aba')).toMatchObject({ version: 2, input: 'B' });
  });

  it('a runner drives instances that moved: signals promote them, and they finish', async () => {
    const t = tiered();
    const waits = defineWorkflow({
      name: 'tiered-waits',
      version: 1,
      start: 'go',
      steps: { go: { kind: 'wait', signal: 'go', next: 'hit' }, hit: { kind: 'task', handler: 'hit' } },
    });
    const runner = createRunner({ store: t, workflows: [waits], handlers: { hit: () => 'hit' } });
    const ids = Array.from({ length: 20 }, (_, i) => `w-${i}`);
    for (const id of ids) await runner.start('tiered-waits', id);
    expect((await t.move({ now: Date.now() + 10_000 })).demoted).toBe(20);
    for (const id of ids) await runner.signal(id, 'go', null, { signalId: `s-${id}` });
    await runner.idle();
    for (const id of ids) expect((await t.load(id))?.status).toBe('completed');
    expect((await t.hot.list({ limit: 100 })).items).toHaveLength(20);
    expect((await t.cold.list({ limit: 100 })).items).toHaveLength(0);
  });
});
