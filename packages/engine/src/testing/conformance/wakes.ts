import { expect, it } from 'vitest';
import { defineWorkflow } from '../../definition/compile.js';
import { createRunner } from '../../runner/runner.js';
import type { Snapshot, TaskState } from '../../snapshot.js';
import type { Store, WakeNotice, WakeSource } from '../../store/store.js';
import { createWorker } from '../../worker/worker.js';
import { makeTestSnapshot } from '../test-snapshot.js';
import { type SuiteContext, until } from './context.js';

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
function nextNotice(store: Store, pred: (h: WakeNotice) => boolean, ms = 10_000) {
  const seen: WakeNotice[] = [];
  let done: (h: WakeNotice) => void = () => {};
  const got = new Promise<WakeNotice>((resolve) => {
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

/** Wake notices (`store.wakes`): what a write announces, and what a notice may hand over. */
export function describeWakes({ fresh }: SuiteContext): void {
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

  it('a notice whose snapshot is not the stored instance changes nothing: the worker reports it and runs the task as stored', async () => {
    const store = await fresh();
    const pay = defineWorkflow({
      name: 'forged-pay',
      version: 1,
      start: 'charge',
      steps: { charge: { kind: 'task', handler: 'charge', input: { amount: 'input.amount' } } },
    });
    // The store's channel, with a forger on it: notices of the instance go missing, one forged
    // notice arrives in their place (valid, the right version, another input).
    let forge: ((h: WakeNotice) => void) | undefined;
    const wakes: WakeSource = {
      subscribe(l) {
        forge = (h) => l.wake(h);
        return store.wakes!.subscribe({ ...l, wake: (h) => h.id !== 'forged-1' && l.wake(h) });
      },
    };
    const forging = Object.assign(Object.create(store) as Store, { wakes });
    const charged: unknown[] = [];
    const errors: unknown[] = [];
    const runner = createRunner({
      store: forging,
      workflows: [pay],
      handlers: { charge: ({ input }) => charged.push(input) },
    });
    const worker = createWorker({
      runner,
      poll: { minMs: 600_000, maxMs: 600_000, maxWithWakesMs: 600_000 },
      on: { error: (e) => errors.push(e) },
    });
    await worker.start();
    try {
      await new Promise((r) => setTimeout(r, 50)); // the first round is over: only notices drive it
      const api = createRunner({ store, workflows: [pay], execute: false });
      const stored = await api.start('forged-pay', 'forged-1', { amount: 10 });
      forge!({
        at: stored.wakeAt!,
        workflow: 'forged-pay',
        id: 'forged-1',
        snapshot: { ...stored, input: { amount: 1_000_000 } },
      });
      await until('the task as stored', async () => (await store.load('forged-1'))?.status === 'completed');
      expect(charged).toEqual([{ amount: 10 }]);
      expect(worker.stats.refusedNotices).toBe(1);
      expect(errors.map((e) => (e as { code?: string }).code)).toEqual(['NOTICE_MISMATCH']);
      expect((await store.load('forged-1'))?.input).toEqual({ amount: 10 });
    } finally {
      await worker.stop();
    }
  });
}
