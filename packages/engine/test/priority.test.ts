import {
  createHarness,
  createMemoryStore,
  createRunner,
  defineWorkflow,
  flowControl,
  type Snapshot,
  step,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { createStoreKit } from '../src/store/store-kit.js';

// Priority: resolved at start into `snapshot.priority` (the start option over the workflow's
// number or input path), and acted on by the stores' due order: work due at once is indexed
// priority × 1 s earlier, so urgent work overtakes a backlog by its head start and no more.

const refunds = defineWorkflow({
  name: 'refunds',
  version: 1,
  start: 'refund',
  priority: 'input.urgency',
  steps: { refund: { kind: 'task', handler: 'refund' } },
});
const fixed = defineWorkflow({
  name: 'fixed',
  version: 1,
  start: 'work',
  priority: 5,
  steps: { work: { kind: 'task', handler: 'work' } },
});
const plain = defineWorkflow({
  name: 'plain',
  version: 1,
  start: 'work',
  steps: { work: { kind: 'task', handler: 'work' } },
});

const start = (def: typeof plain, input: unknown, priority?: number, handoff = false) =>
  step(
    def,
    null,
    {
      type: 'start',
      at: 10_000,
      id: 'r-1',
      input,
      ...(priority === undefined ? {} : { priority }),
      ...(handoff ? { handoff } : {}),
    },
    { kinds: [flowControl] },
  );

/** The error code `fn` throws with. */
function codeOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return (e as { code?: unknown }).code;
  }
  return 'nothing thrown';
}

/** What a store made by `defineStore` indexes as the snapshot's due time. */
const indexed = (s: Snapshot) =>
  createStoreKit('test', () => false, { asked: undefined, fallback: 1 << 20 }).encode(s).wakeAt;

describe('priority at start', () => {
  it("keeps the workflow's number, or the number at its input path, as the run's priority", () => {
    expect(start(fixed, null).priority).toBe(5);
    expect(start(refunds, { urgency: 10 }).priority).toBe(10);
    // Nothing at the path, or 0: the default, kept as no priority at all.
    expect(start(refunds, {}).priority).toBeUndefined();
    expect(start(refunds, { urgency: 0 }).priority).toBeUndefined();
    expect(start(plain, null).priority).toBeUndefined();
  });

  it("the start's priority wins over the workflow's", () => {
    expect(start(fixed, null, 700).priority).toBe(700);
    expect(start(refunds, { urgency: 10 }, 0).priority).toBeUndefined();
    expect(start(plain, null, 3).priority).toBe(3);
  });

  it('refuses a value at the path that is not an integer from 0 to 1000 with INVALID_INPUT', () => {
    for (const urgency of [-1, 1001, 2.5, '7', null, { level: 1 }])
      expect(codeOf(() => start(refunds, { urgency }))).toBe('INVALID_INPUT');
  });

  it('refuses a start priority out of range (INVALID_EVENT), and any without flowControl (KIND_NOT_LOADED)', () => {
    for (const priority of [-1, 1001, 0.5])
      expect(codeOf(() => start(plain, null, priority))).toBe('INVALID_EVENT');
    const bare = () => step(plain, null, { type: 'start', at: 1, id: 'x', priority: 2 });
    expect(codeOf(bare)).toBe('KIND_NOT_LOADED');
    expect(codeOf(() => step(fixed, null, { type: 'start', at: 1, id: 'x' }))).toBe('KIND_NOT_LOADED');
  });

  it('refuses a workflow priority that is not an integer from 0 to 1000 (INVALID_DEFINITION)', () => {
    for (const priority of [-5, 1001, 1.5]) {
      const bad = { ...fixed, priority };
      expect(codeOf(() => step(bad, null, { type: 'start', at: 1, id: 'x' }, { kinds: [flowControl] }))).toBe(
        'INVALID_DEFINITION',
      );
    }
  });

  it('keeps the priority through the run', () => {
    const s = start(fixed, null);
    const done = step(
      fixed,
      s,
      { type: 'task.completed', at: 11_000, step: 'work', attempt: 1, output: 1 },
      {
        kinds: [flowControl],
      },
    );
    expect(done.status).toBe('completed');
    expect(done.priority).toBe(5);
  });
});

describe('what the stores index', () => {
  it('work due at once is indexed priority seconds earlier; a running task and timers keep their times', () => {
    // Handed off: the task is queued, due at once for any worker.
    const queued = start(fixed, null, 10, true);
    expect(queued.wakeAt).toBe(10_000);
    expect(indexed(queued)).toBe(10_000 - 10 * 1000);
    // Run here: due only at its lease's end, which is not work waiting.
    const running = start(fixed, null, 10);
    expect(indexed(running)).toBe(Math.ceil(running.wakeAt! / 1000) * 1000);
    // A retry's backoff timer: its own time, whatever the priority.
    const retrying = step(
      fixed,
      running,
      { type: 'task.failed', at: 10_500, step: 'work', attempt: 1, error: { message: 'busy' } },
      { kinds: [flowControl] },
    );
    expect(retrying.timers).toHaveLength(1);
    expect(indexed(retrying)).toBe(retrying.timers[0]!.at);
    // Without a priority: as it is.
    expect(indexed(start(plain, null, undefined, true))).toBe(10_000);
  });

  it('refuses to write a snapshot with a priority out of range (INVALID_SNAPSHOT)', async () => {
    const store = createMemoryStore();
    const s = { ...start(fixed, null, 10, true), priority: 5000 };
    await expect(store.create(s)).rejects.toMatchObject({ code: 'INVALID_SNAPSHOT' });
    expect(await store.load(s.id)).toBeNull();
  });
});

describe('priority on a runner', () => {
  const urgent = workflow('refund', 1, { priority: 'input.urgency' })
    .input<{ urgency?: number }>()
    .task('refund', { handler: 'refund' })
    .build();

  it('a backlog of priority-0 work is overtaken by later priority-10 work, not by work later than its head start', async () => {
    const store = createMemoryStore();
    let now = 1_000_000;
    // Written for workers (`execute: false`): the runs wait in the store's due order.
    const enqueue = createRunner({
      store,
      workflows: [urgent],
      kinds: [flowControl],
      execute: false,
      clock: () => now,
    });
    for (let n = 0; n < 20; n++) {
      await enqueue.start('refund', `low-${n}`, {});
      now += 100;
    }
    await enqueue.start('refund', 'urgent', { urgency: 10 }); // 2 s after the first low one
    now += 30_000;
    await enqueue.start('refund', 'urgent-later', {}, { priority: 10 }); // the start option
    now += 1;
    const order = await store.listDue(now, 30);
    expect(order.slice(0, 2)).toEqual(['urgent', 'low-0']);
    // 30 s later with a head start of 10 s: behind every low one that waited longer.
    expect(order.at(-1)).toBe('urgent-later');
    expect(order).toHaveLength(22);
  });

  it('refuses a start priority out of range with INVALID_OPTIONS, writing nothing', async () => {
    const store = createMemoryStore();
    const runner = createRunner({ store, workflows: [urgent], kinds: [flowControl], execute: false });
    for (const priority of [-1, 1001, 1.5, Number.NaN]) {
      await expect(runner.start('refund', 'r', {}, { priority })).rejects.toMatchObject({
        code: 'INVALID_OPTIONS',
      });
    }
    await expect(runner.start('refund', 'r', { urgency: 5000 })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    expect(await store.load('r')).toBeNull();
  });

  it('the typed client and the harness take a start priority', async () => {
    const store = createMemoryStore();
    const runner = createRunner({ store, workflows: [urgent], kinds: [flowControl], execute: false });
    const s = await runner.client(urgent).start('c-1', {}, { priority: 42 });
    expect(s.priority).toBe(42);
    const h = createHarness(urgent, { kinds: [flowControl] }).start({ urgency: 3 }, { priority: 9 });
    expect(h.snapshot.priority).toBe(9);
    expect(createHarness(urgent, { kinds: [flowControl] }).start({ urgency: 3 }).snapshot.priority).toBe(3);
    expect(codeOf(() => createHarness(urgent, { kinds: [flowControl] }).start({}, { priority: -2 }))).toBe(
      'INVALID_OPTIONS',
    );
  });
});
