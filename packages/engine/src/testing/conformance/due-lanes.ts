import { expect, it } from 'vitest';
import type { Snapshot, TaskState } from '../../snapshot.js';
import type { Store, WakeHint } from '../../store/store.js';
import { makeTestSnapshot } from '../test-snapshot.js';
import type { SuiteContext } from './context.js';

const wf = (name: string) => ({ name, version: 1, hash: 'h' });

/** A running task whose deadline is the wake time: a write that announces nothing. */
const running = (deadline: number, queued?: boolean): Record<string, TaskState> => ({
  'a:run': {
    step: 'a',
    phase: 'run',
    attempt: 1,
    idempotencyKey: 'k',
    handler: 'h',
    dispatchedAt: 0,
    deadline,
    dispatchVersion: 1,
    ...(queued ? { queued } : {}),
  },
});

/** Waits for the first notice matching `pred`, failing after `ms`. */
function nextNotice(store: Store, pred: (h: WakeHint) => boolean, ms = 10_000) {
  const seen: WakeHint[] = [];
  let done: (h: WakeHint) => void = () => {};
  const got = new Promise<WakeHint>((resolve) => {
    done = resolve;
  });
  const sub = store.wakes!.subscribe({
    wake(h) {
      seen.push(h);
      if (pred(h)) done(h);
    },
  });
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`no wake notice within ${ms} ms; saw ${JSON.stringify(seen)}`)), ms),
  );
  return { ready: sub, seen, first: Promise.race([got, timeout]).finally(async () => (await sub).close()) };
}

/** Per-workflow lanes of `listDue`, claims given back, and wake notices (where the store has them). */
export function describeDueLanes({ options, fresh }: SuiteContext): void {
  it('listDue with a workflow gives only that workflow, earliest first', async () => {
    const store = await fresh();
    const rows: Array<[string, string, number | null]> = [
      ['lane-a1', 'flood', 5],
      ['lane-b1', 'quiet', 7],
      ['lane-a2', 'flood', 1],
      ['lane-b2', 'quiet', 3],
      ['lane-b3', 'quiet', null],
      ['lane-b4', 'quiet', 2000],
    ];
    for (const [id, name, wakeAt] of rows)
      await store.create(makeTestSnapshot(id, { workflow: wf(name), wakeAt }));
    expect(await store.listDue(100, 10, { workflow: 'quiet' })).toEqual(['lane-b2', 'lane-b1']);
    expect(await store.listDue(100, 1, { workflow: 'flood' })).toEqual(['lane-a2']);
    expect(await store.listDue(100, 10, { workflow: 'no-such-workflow' })).toEqual([]);
    expect(await store.listDue(100, 10, { workflow: 'not a valid id \u0000' })).toEqual([]);
  });

  if (options.claimsDue) {
    it('claimed ids come back after releaseDue or a save, not before', async () => {
      const store = await fresh();
      expect(store.claimsDue).toBe(true);
      for (const id of ['rel-1', 'rel-2', 'rel-3']) await store.create(makeTestSnapshot(id, { wakeAt: 1 }));
      expect(await store.listDue(100, 10)).toEqual(['rel-1', 'rel-2', 'rel-3']);
      expect(await store.listDue(100, 10)).toEqual([]);
      await store.releaseDue!(['rel-2']);
      // A save ends the claim too: the instance is due again at its new time.
      await store.save(makeTestSnapshot('rel-3', { version: 2, wakeAt: 2 }), 1);
      expect(await store.listDue(100, 10)).toEqual(['rel-2', 'rel-3']);
      // A lane claims as well.
      await store.create(makeTestSnapshot('rel-4', { workflow: wf('lane'), wakeAt: 1 }));
      expect(await store.listDue(100, 10, { workflow: 'lane' })).toEqual(['rel-4']);
      expect(await store.listDue(100, 10)).toEqual([]);
    });
  }

  if (options.claimsDue) {
    it('leaseMs sets how long one call claims; a lapsed claim is due again', async () => {
      const store = await fresh();
      for (const id of ['lease-1', 'lease-2', 'lease-3'])
        await store.create(makeTestSnapshot(id, { workflow: wf('leased'), wakeAt: 1 }));
      expect(await store.listDue(1000, 1, { leaseMs: 50 })).toEqual(['lease-1']);
      expect(await store.listDue(1000, 1, { workflow: 'leased', leaseMs: 5000 })).toEqual(['lease-2']);
      // Inside the short lease neither is handed out again; the third one is.
      expect(await store.listDue(1049, 10)).toEqual(['lease-3']);
      // At 1050 the 50 ms lease has lapsed, the 5 s one (and the default one) have not.
      expect(await store.listDue(1050, 10, { leaseMs: 0 })).toEqual(['lease-1']);
      // A lease of 0 ends at `now`: due again at once.
      expect(await store.listDue(1050, 10, { workflow: 'leased' })).toEqual(['lease-1']);
      expect(await store.listDue(6000, 10)).toEqual(['lease-2']);
      if (store.claimDue) {
        await store.create(makeTestSnapshot('lease-4', { wakeAt: 1 }));
        expect((await store.claimDue(7000, 1, { ids: ['lease-4'], leaseMs: 100 })).map((s) => s.id)).toEqual([
          'lease-4',
        ]);
        expect(await store.claimDue(7099, 1, { ids: ['lease-4'] })).toEqual([]);
        expect((await store.claimDue(7100, 1, { ids: ['lease-4'] })).map((s) => s.id)).toEqual(['lease-4']);
      }
      // A bad lease is refused before anything is claimed.
      await store.create(makeTestSnapshot('lease-5', { wakeAt: 1 }));
      for (const leaseMs of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])
        await expect(store.listDue(1e9, 10, { leaseMs })).rejects.toThrow(RangeError);
      expect(await store.listDue(1e9, 10, { workflow: 'conformance' })).toContain('lease-5');
    });

    it('claimed instances do not hold back the unclaimed ones behind them', async () => {
      const store = await fresh();
      const ids = Array.from({ length: 40 }, (_, i) => `clog-${String(i).padStart(2, '0')}`);
      for (const [i, id] of ids.entries()) await store.create(makeTestSnapshot(id, { wakeAt: i }));
      // The 30 earliest claimed for long: each later poll gets the rest, earliest first.
      const head = await store.listDue(100, 30, { leaseMs: 60_000 });
      expect(head).toEqual(ids.slice(0, 30));
      expect(await store.listDue(200, 4, { leaseMs: 60_000 })).toEqual(ids.slice(30, 34));
      expect(await store.listDue(300, 10)).toEqual(ids.slice(34));
      expect(await store.listDue(400, 10)).toEqual([]);
    });
  }

  if (options.claimDue) {
    it('claimDue claims as listDue does and returns the stored snapshots', async () => {
      const store = await fresh();
      if (!store.claimDue) throw new Error('the suite was told this store has claimDue; it has not');
      expect(store.claimsDue).toBe(true);
      const rows: Array<[string, string, number | null]> = [
        ['cd-3', 'one', 30],
        ['cd-1', 'one', 10],
        ['cd-2', 'two', 20],
        ['cd-4', 'one', 5000],
        ['cd-5', 'two', null],
      ];
      for (const [id, name, wakeAt] of rows)
        await store.create(makeTestSnapshot(id, { workflow: wf(name), wakeAt, input: { id } }));
      // Only the named ones, only if due: a future one, one without a wake time and an unknown id give nothing.
      const named = await store.claimDue(100, 10, { ids: ['cd-3', 'cd-4', 'cd-5', 'cd-none'] });
      expect(named).toEqual([await store.load('cd-3')]);
      // Claimed: neither claimDue nor listDue returns it again until it is saved or released.
      expect(await store.claimDue(100, 10, { ids: ['cd-3'] })).toEqual([]);
      expect(await store.listDue(100, 10, { workflow: 'one' })).toEqual(['cd-1']);
      await store.releaseDue!(['cd-1']);
      // A lane, earliest first, at most `limit`.
      const lane = await store.claimDue(100, 1, { workflow: 'one', ids: ['cd-1', 'cd-2', 'cd-3'] });
      expect(lane).toEqual([await store.load('cd-1')]);
      const rest = await store.claimDue(100, 10, { workflow: 'two' });
      expect(rest.map((s) => [s.id, s.input])).toEqual([['cd-2', { id: 'cd-2' }]]);
      expect(await store.claimDue(100, 10)).toEqual([]);
      // A save ends the claim.
      await store.save(makeTestSnapshot('cd-3', { version: 2, workflow: wf('one'), wakeAt: 40 }), 1);
      expect((await store.claimDue(100, 10, { ids: ['cd-3'] })).map((s) => s.version)).toEqual([2]);
      expect(await store.claimDue(100, 10, { ids: [] })).toEqual([]);
      expect(await store.claimDue(6000, 10, { workflow: 'not a valid id \u0000' })).toEqual([]);
      expect((await store.claimDue(6000, 10, { ids: ['cd-4', 'cd-5'] })).map((s) => s.id)).toEqual(['cd-4']);
    });
  }

  if (options.wakes) {
    it('a timer announced while a task runs says so (busy): another worker then claims it only when due', async () => {
      const store = await fresh();
      const w = nextNotice(store, (h) => h.at === 6262);
      await w.ready;
      const timer: Partial<Snapshot> = { timers: [{ kind: 'retry', step: 'b', at: 6262 }], wakeAt: 6262 };
      await store.create(
        makeTestSnapshot('busy-1', { workflow: wf('waker'), ...timer, tasks: running(90_000) }),
      );
      expect(await w.first).toEqual({ at: 6262, workflow: 'waker', id: 'busy-1', busy: true });
    });

    it('a timer or a handed-off task is announced; a running task deadline is not', async () => {
      const store = await fresh();
      expect(store.wakes).toBeDefined();
      const w = nextNotice(store, (h) => h.at === 4242 || h.at === 1111);
      await w.ready;
      // Deadline only: silent. Then a timer: the first notice this instance sends is the timer's.
      await store.create(
        makeTestSnapshot('wake-1', { workflow: wf('waker'), wakeAt: 1111, tasks: running(1111) }),
      );
      const timer: Partial<Snapshot> = { timers: [{ kind: 'retry', step: 'a', at: 4242 }], wakeAt: 4242 };
      await store.save(makeTestSnapshot('wake-1', { version: 2, workflow: wf('waker'), ...timer }), 1);
      expect(await w.first).toEqual({ at: 4242, workflow: 'waker', id: 'wake-1' });

      const q = nextNotice(store, (h) => h.at === 777);
      await q.ready;
      const handed = makeTestSnapshot('wake-2', {
        workflow: wf('waker'),
        wakeAt: 777,
        tasks: running(777, true),
      });
      await store.create(handed);
      // A store may send the snapshot with a hand-off (a worker then takes the task with no claim
      // or load); if it does, it is the snapshot written.
      const { snapshot, ...hint } = await q.first;
      expect(hint).toEqual({ at: 777, workflow: 'waker', id: 'wake-2' });
      if (snapshot !== undefined) expect(snapshot).toEqual(handed);
    });
  }
}
