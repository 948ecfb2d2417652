import { describe, expect, it } from 'vitest';
import { createRunner, type Store, workflow } from '../../src/index.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { DuePoller } from '../../src/worker/due-poller.js';
import { TaskPool } from '../../src/worker/task-pool.js';
import type { WorkerStats } from '../../src/worker/types.js';
import { recorder } from './recorder.js';

const nap = workflow('nap', 1).sleep('rest', { ms: 1_000 }).task('after', { handler: 'after' }).build();
const other = workflow('other', 1).sleep('rest', { ms: 1_000 }).build();

/** A memory store whose calls (its capabilities' too) are recorded by method name. */
function recorded() {
  const calls: Array<{ call: string; args: unknown[] }> = [];
  const record = <T extends object>(inner: T): T =>
    new Proxy(inner, {
      get(target, key, receiver) {
        const v = Reflect.get(target, key, receiver);
        if ((key === 'claims' || key === 'inbox') && v) return record(v);
        if (typeof v !== 'function' || typeof key !== 'string') return v;
        return (...args: unknown[]) => {
          calls.push({ call: key, args });
          return v.apply(target, args);
        };
      },
    });
  const store = record(createMemoryStore()) as Store;
  return { store, calls, names: () => calls.map((c) => c.call) };
}

function setup(concurrency = 4, wrap = (store: Store): Store => store) {
  let now = 10_000;
  const rec = recorded();
  const runner = createRunner({
    store: wrap(rec.store),
    workflows: [nap],
    handlers: { after: () => 'done' },
    clock: () => now,
  });
  const foreign = createRunner({ store: rec.store, workflows: [other], execute: false, clock: () => now });
  const stats = {
    polls: 0,
    claimed: 0,
    ticks: 0,
    errors: 0,
    skipped: 0,
    lostTakes: 0,
    maxLagMs: 0,
  } as WorkerStats;
  const { emit, events } = recorder();
  const dueAt: number[] = [];
  const pool = new TaskPool(concurrency, {}, 0, () => now, { start() {}, end() {}, freed() {} });
  const poller = new DuePoller({
    runner,
    pool,
    stats,
    emit,
    clock: () => now,
    skipMs: 1_000,
    lanes: 'workflow',
    leaseMs: 5_000,
    namedDueAt: (at) => dueAt.push(at),
  });
  return {
    ...rec,
    runner,
    foreign,
    stats,
    events,
    dueAt,
    poller,
    at: (t: number) => {
      now = t;
    },
  };
}

describe('DuePoller', () => {
  it('a hinted instance is claimed by id once due (no lane poll for a named round) and ticked', async () => {
    const t = setup();
    await t.runner.start('nap', 'n-1', undefined, { wait: 'write' });
    // Heard of as due 3 s from now: beyond the look-ahead, so it is not claimed before then.
    expect(t.poller.hint('n-1', 13_000)).toBe(true);
    expect(await t.poller.round(false)).toEqual({ ticked: 0, full: false, left: false });
    expect(t.poller.namedDue(12_999)).toBe(false);
    t.at(13_000);
    t.calls.length = 0;
    const r = await t.poller.round(false);
    expect(r.ticked).toBe(1);
    const claim = t.calls.find((c) => c.call === 'claimDue');
    expect(claim?.args[2]).toMatchObject({ ids: ['n-1'], leaseMs: 5_000 });
    expect(t.stats.ticks).toBe(1);
    expect((await t.runner.get('n-1'))?.steps['rest']?.status).toBe('completed');
  });

  it('a hint due within two seconds is claimed ahead and held: the round at its time ticks with no query', async () => {
    const t = setup();
    await t.runner.start('nap', 'n-2', undefined, { wait: 'write' });
    t.poller.hint('n-2', 11_000);
    await new Promise((r) => setTimeout(r, 10)); // the claim ahead lands
    expect(t.dueAt).toEqual([11_000]);
    t.at(11_000);
    t.calls.length = 0;
    expect((await t.poller.round(false)).ticked).toBe(1);
    expect(t.names()).not.toContain('claimDue');
    expect(t.names()).not.toContain('load');
  });

  it('a claim held ahead that a save of its own runner ended is claimed again when that write is heard', async () => {
    const t = setup();
    const s = await t.runner.start('nap', 'n-8', undefined, { wait: 'write' });
    t.poller.hint('n-8', 11_000);
    await new Promise((r) => setTimeout(r, 10)); // the claim ahead lands
    // A write of this worker's runner (a parallel branch's result, say) keeps the timer; its save
    // ends the claim. The worker tells the poller, then hears the write's wake time, as worker.ts does.
    await t.store.save({ ...s, version: s.version + 1 }, s.version);
    t.poller.wrote('n-8');
    t.poller.hint('n-8', 11_000);
    await new Promise((r) => setTimeout(r, 10));
    // Held again: another worker's claim by id at the due time finds it taken, so only one ticks.
    expect(await t.store.claims!.claimDue(11_000, 1, { ids: ['n-8'], token: 'another' })).toEqual([]);
    t.at(11_000);
    t.calls.length = 0;
    expect((await t.poller.round(false)).ticked).toBe(1);
    expect(t.names()).not.toContain('claimDue');
    expect((await t.runner.get('n-8'))?.steps['rest']?.status).toBe('completed');
  });

  it('a claim by id after standing by for another worker’s take gives up once that take is written: a lost take, no reload', async () => {
    let taken: (() => Promise<void>) | undefined;
    // The taker's write lands between this worker's claim and its tick.
    const t = setup(4, (store) => ({
      ...store,
      claims: {
        ...store.claims!,
        async claimDue(now, n, query) {
          const got = await store.claims!.claimDue(now, n, query);
          await taken?.();
          return got;
        },
      },
    }));
    const s = await t.runner.start('nap', 'n-9', undefined, { wait: 'write' });
    t.at(11_000);
    taken = () => t.store.save({ ...s, version: s.version + 1 }, s.version);
    expect(t.poller.hint('n-9', 11_000, true)).toBe(true);
    t.calls.length = 0;
    await t.poller.round(false);
    expect(t.stats.lostTakes).toBe(1);
    expect(t.runner.stats.conflicts).toBe(0);
    expect(t.names()).not.toContain('load');
    expect((await t.runner.get('n-9'))?.version).toBe(s.version + 1);
  });

  it('a handed-over snapshot is ticked from as it is: no claim, no load', async () => {
    const t = setup();
    const s = await t.runner.start('nap', 'n-3', undefined, { wait: 'write' });
    t.at(11_000);
    expect(t.poller.give(s, 11_000)).toBe(true);
    t.calls.length = 0;
    expect((await t.poller.round(false)).ticked).toBe(1);
    expect(t.names().filter((n) => n === 'claimDue' || n === 'load' || n === 'listDue')).toEqual([]);
    expect(t.names()).toContain('save');
  });

  it('a stale handed-over snapshot loses its take with no reload: a lost take, nothing written', async () => {
    const t = setup();
    const s = await t.runner.start('nap', 'n-4', undefined, { wait: 'write' });
    t.at(11_000);
    await t.runner.tick('n-4');
    t.poller.give(s, 11_000);
    const version = (await t.runner.get('n-4'))?.version;
    await t.poller.round(false);
    expect(t.stats.lostTakes).toBe(1);
    expect((await t.runner.get('n-4'))?.version).toBe(version);
  });

  it('polls each lane; an instance it cannot step is skipped, its claim given back, and the lane asks for one more', async () => {
    const t = setup();
    await t.foreign.start('other', 'o-1', undefined);
    await t.runner.start('nap', 'n-5', undefined, { wait: 'write' });
    t.at(11_000);
    // A single lane sees both workflows: the foreign one is skipped.
    const single = new DuePoller({
      ...(t.poller as unknown as { p: ConstructorParameters<typeof DuePoller>[0] }).p,
      lanes: 'single',
    });
    const first = await single.round();
    expect(first.ticked).toBe(2);
    expect(t.stats.skipped).toBe(1);
    expect(t.events.some(([k, id]) => k === 'skipped' && id === 'o-1')).toBe(true);
    expect(t.names()).toContain('release');
    t.calls.length = 0;
    await single.round();
    const asked = t.calls.filter((c) => c.call === 'claimDue').map((c) => c.args[1]);
    expect(asked).toEqual([4 + 1]);
  });

  it('reports a full lane (more may be due) and named instances left for want of a slot', async () => {
    const t = setup(1);
    for (const id of ['f-1', 'f-2']) await t.runner.start('nap', id, undefined, { wait: 'write' });
    t.at(11_000);
    expect((await t.poller.round()).full).toBe(true);
  });

  it('on stop gives back the claims it holds and forgets every named instance', async () => {
    const t = setup();
    await t.runner.start('nap', 'n-6', undefined, { wait: 'write' });
    t.poller.hint('n-6', 11_000);
    await new Promise((r) => setTimeout(r, 10));
    t.calls.length = 0;
    await t.poller.releaseHeld();
    expect(t.calls.find((c) => c.call === 'release')?.args[0]).toEqual(['n-6']);
    t.at(11_000);
    expect(t.poller.namedDue(11_000)).toBe(false);
  });
});
