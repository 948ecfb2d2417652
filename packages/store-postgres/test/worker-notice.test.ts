import {
  createRunner,
  createWorker,
  DEFAULT_CLAIM_LEASE_MS,
  defineWorkflow,
  type Store,
  type Worker,
} from '@stepfold/engine';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_SCHEMA } from './server.js';
import { useTestTables } from './test-tables.js';

// A notice names its instance: a worker claims and loads it in one statement (claimDue with its id)
// and ticks it, two round trips, with no listDue and no load for it. A notice that hands a task
// over carries the snapshot too: the worker's one round trip is the write that takes the task.

const { pool, store: freshStore } = useTestTables('wn');

const waits = defineWorkflow({
  name: 'notice-waits',
  version: 1,
  start: 'go',
  steps: {
    go: { kind: 'wait', signal: 'go', next: 'hit' },
    hit: { kind: 'task', handler: 'hit' },
  },
});
const naps = defineWorkflow({
  name: 'notice-naps',
  version: 1,
  start: 'nap',
  steps: {
    nap: { kind: 'sleep', until: 'input.at', next: 'hit' },
    hit: { kind: 'task', handler: 'hit' },
  },
});

// The worker's own claim token: a claim it takes carries it, so its release gives back only its own.
const token = expect.any(String);

/** Every store call the worker's runner makes, by method (`claimDue` of `store.claims`), with its arguments. */
function recorded(store: Store) {
  const calls: Array<{ method: string; args: unknown[] }> = [];
  const spy = Object.create(store) as Store;
  const claims = Object.create(store.claims!) as NonNullable<Store['claims']>;
  const wrap = <T extends object>(on: T, from: T, method: keyof T & string) => {
    const real = (from[method] as (...a: unknown[]) => Promise<unknown>).bind(from);
    Object.defineProperty(on, method, {
      value: (...args: unknown[]) => {
        calls.push({ method, args });
        return real(...args);
      },
    });
  };
  for (const method of ['listDue', 'load', 'save'] as const) wrap(spy, store, method);
  wrap(claims, store.claims!, 'claimDue');
  Object.defineProperty(spy, 'claims', { value: claims });
  return { spy, calls };
}

describe('postgres worker driven by wake notices', () => {
  let worker: Worker | undefined;
  afterAll(async () => worker?.stop({ graceMs: 1000 }));

  it('takes a handed-over task from the notice’s snapshot, and claims a noticed timer by id: no listDue, no load', async () => {
    const store = await freshStore({}, 'wn');
    const api = createRunner({
      store,
      workflows: [waits, naps],
      handlers: { hit: () => null },
      execute: false,
    });
    const { spy, calls } = recorded(store);
    const ran: string[] = [];
    // The store calls made before each handler started, by instance.
    const before = new Map<string, string[]>();
    const runner = createRunner({
      store: spy,
      workflows: [waits, naps],
      handlers: {
        hit: ({ instanceId }) => {
          ran.push(instanceId);
          before.set(
            instanceId,
            calls.map((c) => c.method),
          );
          return null;
        },
      },
    });
    // Polls only every ten minutes after the first empty round: only notices can drive it.
    worker = createWorker({ runner, poll: { minMs: 600_000, maxMs: 600_000, maxWithWakesMs: 600_000 } });
    await worker.start();
    await api.start('notice-waits', 'sig-1');
    const until = async (what: string, ok: () => boolean) => {
      for (let i = 0; i < 400 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
      if (!ok()) throw new Error(`timed out waiting for ${what}; calls: ${JSON.stringify(calls)}`);
    };
    // The first round has polled (and found nothing due: the instance waits for its signal).
    await until('the first round', () => calls.some((c) => c.method === 'claimDue'));
    calls.length = 0;

    await api.signal('sig-1', 'go');
    await until('the handler', () => ran.includes('sig-1'));
    // The notice carried the snapshot the signal wrote: the worker's first call is the write that
    // takes the task (no claim, no load), and the round a named notice starts polls no lane.
    expect(before.get('sig-1')).toEqual(['save']);
    expect(calls.filter((c) => c.method !== 'save')).toEqual([]);
    expect((await store.load('sig-1'))?.steps.hit?.attempt).toBe(1);

    // A timer another process set, due soon: the worker hears its time and id, claims it by id at
    // once as of the due time, holds the snapshot, and at the due time ticks it with no query
    // before the write that takes the task.
    calls.length = 0;
    const at = Date.now() + 300;
    await api.start('notice-naps', 'nap-1', { at });
    await until('the early claim', () => calls.some((c) => c.method === 'claimDue'));
    expect(Date.now()).toBeLessThan(at);
    expect(ran).not.toContain('nap-1');
    await until('the timer’s handler', () => ran.includes('nap-1'));
    expect(before.get('nap-1')).toEqual(['claimDue', 'save']);
    expect(calls[0]?.args.slice(0, 3)).toEqual([
      at,
      1,
      { ids: ['nap-1'], leaseMs: DEFAULT_CLAIM_LEASE_MS, token, onUnreadable: expect.any(Function) },
    ]);
    const taken = (await store.load('nap-1'))?.steps.hit?.startedAt;
    expect(taken).toBeGreaterThanOrEqual(at);

    // Due later than the look-ahead: heard, but claimed only when due.
    calls.length = 0;
    const late = Date.now() + 2_600;
    await api.start('notice-naps', 'nap-2', { at: late });
    await new Promise((r) => setTimeout(r, 300));
    expect(calls).toEqual([]);
    await until('the later timer’s handler', () => ran.includes('nap-2'));
    expect(calls[0]?.method).toBe('claimDue');
    expect(calls[0]?.args[2]).toEqual({
      ids: ['nap-2'],
      leaseMs: DEFAULT_CLAIM_LEASE_MS,
      token,
      onUnreadable: expect.any(Function),
    });
    expect(calls.filter((c) => c.method === 'load' || c.method === 'listDue')).toEqual([]);
    expect((await store.load('nap-1'))?.status).toBe('completed');
    expect((await store.load('sig-1'))?.status).toBe('completed');
  });

  it('gives back a claim held for a soon-due time when it stops, for another worker to take', async () => {
    await worker?.stop({ graceMs: 100 });
    const store = await freshStore({}, 'wh');
    const { table } = store;
    const api = createRunner({ store, workflows: [naps], handlers: { hit: () => null }, execute: false });
    const { spy, calls } = recorded(store);
    const ran: string[] = [];
    const handlers = {
      hit: ({ instanceId }: { instanceId: string }) => {
        ran.push(instanceId);
        return null;
      },
    };
    const slow = { minMs: 600_000, maxMs: 600_000, maxWithWakesMs: 600_000 };
    const first = createWorker({
      runner: createRunner({ store: spy, workflows: [naps], handlers }),
      poll: slow,
    });
    await first.start();
    // Its first rounds (every lane, and the inbox) are over: from here only the notice moves it.
    await first.idle();
    const at = Date.now() + 1_500;
    await api.start('notice-naps', 'held-1', { at });
    // The first worker claims it as soon as it hears the notice (the row shows the claim).
    const claimedUntil = async () =>
      (
        await pool.query<{ c: string | null }>(
          `SELECT claimed_until AS c FROM "${TEST_SCHEMA}"."${table}" WHERE id = 'held-1'`,
        )
      ).rows[0]?.c ?? null;
    for (let i = 0; i < 200 && (await claimedUntil()) === null; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(Number(await claimedUntil())).toBeGreaterThanOrEqual(at);
    expect(
      calls
        .filter((c) => c.method === 'claimDue')
        .at(-1)
        ?.args.slice(0, 3),
    ).toEqual([
      at,
      1,
      { ids: ['held-1'], leaseMs: DEFAULT_CLAIM_LEASE_MS, token, onUnreadable: expect.any(Function) },
    ]);
    // Held by the first worker: as of its due time, nobody else can claim it.
    expect(await store.claims!.claimDue(at, 1, { ids: ['held-1'] })).toEqual([]);
    await first.stop({ graceMs: 100 });
    expect(await claimedUntil()).toBeNull();
    const claimed = await store.claims!.claimDue(at, 1, { ids: ['held-1'] });
    expect(claimed.map((s) => s.id)).toEqual(['held-1']);
    await store.claims!.release(['held-1']);
    expect(ran).toEqual([]);

    // A second worker, started after (it heard no notice: its polls find the instance once due).
    worker = createWorker({
      runner: createRunner({ store, workflows: [naps], handlers }),
      poll: { minMs: 50, maxMs: 100, maxWithWakesMs: 100 },
    });
    await worker.start();
    for (let i = 0; i < 400 && !ran.includes('held-1'); i++) await new Promise((r) => setTimeout(r, 25));
    expect(ran).toEqual(['held-1']);
    expect((await store.load('held-1'))?.steps.hit?.startedAt).toBeGreaterThanOrEqual(at);
  });

  it('a stopping worker gives back what it never started; a live worker hears it and runs it at once', async () => {
    await worker?.stop({ graceMs: 100 });
    const store = await freshStore({}, 'wr');
    const ran: string[] = [];
    let letGo: () => void = () => {};
    const held = new Promise<void>((r) => {
      letGo = r;
    });
    const handlers = (who: string) => ({
      hit: async ({ instanceId, attempt }: { instanceId: string; attempt: number }) => {
        ran.push(`${who} ${instanceId}#${attempt}`);
        if (instanceId === 'busy') await held;
        return null;
      },
    });
    const slow = { minMs: 600_000, maxMs: 600_000, maxWithWakesMs: 600_000 };
    // The second worker polls once at start, then only notices can drive it.
    const second = createWorker({
      runner: createRunner({ store, workflows: [waits], handlers: handlers('second') }),
      poll: slow,
    });
    await second.start();
    const runner = createRunner({ store, workflows: [waits], handlers: handlers('first') });
    const first = createWorker({ runner, concurrency: 1, poll: slow });
    await first.start();
    // Both signalled through the first worker's runner: `busy` runs (held), `queued` waits for the slot.
    for (const id of ['busy', 'queued']) {
      await runner.start('notice-waits', id, undefined, { wait: 'write' });
      await runner.signal(id, 'go', undefined, { wait: 'write' });
    }
    expect(first.stats).toMatchObject({ running: 1, queued: 1 });
    const released: number[] = [];
    const stopping = first.stop({ graceMs: 100, abortMs: 100 });
    // The busy handler outlives the grace; it is aborted and its failure retried later.
    await stopping;
    released.push(first.stats.released);
    letGo();
    expect(released).toEqual([1]);
    const queued = await store.load('queued');
    expect(queued?.log.some((e) => e.type === 'task.released')).toBe(true);
    for (let i = 0; i < 200 && !ran.includes('second queued#1'); i++)
      await new Promise((r) => setTimeout(r, 25));
    // Same attempt, run by the second worker long before the task's five-minute deadline.
    expect(ran).toContain('second queued#1');
    expect(ran.filter((r) => r.includes('queued'))).toEqual(['second queued#1']);
    for (let i = 0; i < 200 && (await store.load('queued'))?.status !== 'completed'; i++)
      await new Promise((r) => setTimeout(r, 25));
    expect((await store.load('queued'))?.status).toBe('completed');
    worker = second;
  });

  it('a fleet of three hears every hand-off with its snapshot: one takes it, the others find it taken with one claim; each task runs once, nothing is reloaded', async () => {
    await worker?.stop({ graceMs: 100 });
    const store = await freshStore({}, 'w3');
    const api = createRunner({ store, workflows: [waits], handlers: { hit: () => null }, execute: false });
    const runs = new Map<string, number>();
    const slow = { minMs: 600_000, maxMs: 600_000, maxWithWakesMs: 600_000 };
    const spies = [0, 1, 2].map(() => recorded(store));
    const workers = spies.map(({ spy }, index) =>
      createWorker({
        runner: createRunner({
          store: spy,
          workflows: [waits],
          handlers: {
            hit: ({ instanceId }) => {
              runs.set(instanceId, (runs.get(instanceId) ?? 0) + 1);
              return null;
            },
          },
        }),
        poll: slow,
        // Slots for every hand-off at once, and turns a second apart: a taker slower than its turn
        // (a full pool, a loaded machine) lets a stand-by claim the task first — correct, but not
        // what this test counts.
        concurrency: 40,
        standbyMs: 1000,
        fleet: { index, size: 3 },
      }),
    );
    try {
      for (const w of workers) await w.start();
      const ids = Array.from({ length: 30 }, (_, i) => `fan-${i}`);
      for (const id of ids) await api.start('notice-waits', id);
      for (const s of spies) s.calls.length = 0;
      await Promise.all(ids.map((id) => api.signal(id, 'go')));
      for (let i = 0; i < 400 && ids.some((id) => runs.get(id) === undefined); i++)
        await new Promise((r) => setTimeout(r, 25));
      await Promise.all(workers.map((w) => w.idle()));
      expect(ids.filter((id) => runs.get(id) !== 1)).toEqual([]);
      for (const id of ids) expect((await store.load(id))?.status, id).toBe('completed');
      // Notices alone drove them: no lane was polled. The worker whose turn it was took each
      // from the notice's snapshot; the two others stood by, then claimed it by id and found it
      // taken (counted as lost takes): no write lost a race, nothing was reloaded.
      await expect
        .poll(() => workers.reduce((n, w) => n + w.stats.lostTakes, 0), { timeout: 10_000 })
        .toBe(ids.length * 2);
      const calls = spies.flatMap((s) => s.calls);
      expect(calls.filter((c) => c.method === 'listDue')).toEqual([]);
      expect(calls.filter((c) => c.method === 'load')).toEqual([]);
      expect(calls.filter((c) => c.method === 'save').length).toBe(ids.length * 2);
      // Stand-by claims by id, several ids to a statement when they come due together.
      const standby = calls.filter((c) => c.method === 'claimDue');
      expect(standby.reduce((n, c) => n + ((c.args[2] as { ids?: string[] }).ids?.length ?? 0), 0)).toBe(
        ids.length * 2,
      );
      expect(workers.reduce((n, w) => n + w.stats.ticks, 0)).toBe(ids.length);
      expect(workers.reduce((n, w) => n + w.stats.conflicts, 0)).toBe(0);
      // The ids' hash shared the takes out.
      for (const w of workers) expect(w.stats.ticks).toBeGreaterThan(0);
    } finally {
      await Promise.all(workers.map((w) => w.stop({ graceMs: 1000 })));
    }
  });
});
