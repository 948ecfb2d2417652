import {
  composition,
  createHarness,
  createMemoryStore,
  createRunner,
  defineWorkflow,
  TaskError,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// Bugs the tree property test (tree.property.test.ts) found in map and child steps, each pinned
// by the smallest case that showed it.

const undoable = (onFailure?: 'dlq') =>
  defineWorkflow({
    name: 'undoable',
    version: 1,
    start: 'each',
    steps: {
      each: {
        kind: 'map',
        items: 'input.xs',
        handler: 'work',
        compensate: 'unwork',
        maxConcurrency: 2,
        retry: { maxAttempts: 2, initialMs: 100 },
        ...(onFailure ? { onFailure } : {}),
      },
    },
  });

describe('map steps', () => {
  it('whose items are not an array fail the step (nothing to undo) instead of throwing on entry', () => {
    // It threw a TypeError: the rollback asked the map for its completed items, and it had no state.
    const h = createHarness(undoable(), { kinds: [composition] }).start({ xs: 'nope' });
    expect(h.status).toBe('failed');
    expect(h.snapshot.error).toMatchObject({ step: 'each', code: 'INVALID_ITEMS' });
    expect(h.snapshot.steps['each']?.status).toBe('compensated');
  });

  it('parked in dlq for items that are not an array, read them again when requeued', () => {
    // The requeue threw a TypeError too.
    const h = createHarness(undoable('dlq'), { kinds: [composition] }).start({ xs: null });
    expect(h.status).toBe('dlq');
    h.requeue({ inputPatch: { xs: [1] } });
    expect(h.dispatched('each')).toMatchObject([{ item: 0 }]);
    h.complete('each', 2, { item: 0 });
    expect(h.status).toBe('completed');
    expect(h.output('each')).toEqual([2]);
  });

  it('does not compensate an item that was waiting to retry when the map failed', () => {
    // The item left `running` without joining `failed`, so the rollback took it for completed.
    const h = createHarness(undoable(), { kinds: [composition] }).start({ xs: [0, 1] });
    h.fail('each', { message: 'flaky', retryable: true }, { item: 0 });
    h.fail('each', { message: 'broken', retryable: false }, { item: 1 });
    expect(h.status).toBe('failed');
    expect(h.snapshot.steps['each']?.map).toMatchObject({ ok: 0, running: [], failed: [1, 0] });
    expect(h.events.filter((e) => e.type === 'task.completed')).toEqual([]);
    expect(h.snapshot.log.some((l) => l.type === 'compensation.dispatched')).toBe(false);
  });
});

// Only the first item's child passes a pivot: `input.i` is its index.
const line = defineWorkflow({
  name: 'line',
  version: 1,
  start: 'pick',
  steps: {
    pick: { kind: 'task', handler: 'pick', compensate: 'unpick', next: 'first' },
    first: {
      kind: 'choice',
      branches: [{ when: { '==': [{ var: 'input.i' }, 0] }, next: 'send' }],
      otherwise: 'pack',
    },
    send: { kind: 'task', handler: 'send', pivot: true, next: 'pack' },
    pack: { kind: 'task', handler: 'pack' },
  },
});
const lines = defineWorkflow({
  name: 'lines',
  version: 1,
  start: 'each',
  steps: {
    each: { kind: 'map', items: 'input.xs', workflow: 'line', input: { i: 'index' }, maxConcurrency: 3 },
  },
});

describe('workflow maps', () => {
  it("stop undoing items once a child in flight completes past its pivot during the map's rollback", () => {
    // The map went on reverting the items before it, then tried to revert the pivot child itself:
    // refused (PAST_PIVOT), so the parent sat in compensation-dlq, and every requeue failed again.
    const h = createHarness(lines, { kinds: [composition], workflows: [line], id: 'r' }).start({
      xs: [0, 1, 2],
    });
    for (const i of [1, 2]) {
      h.child('each', i).complete('pick', {});
      h.child('each', i).complete('pack', {});
    }
    const first = h.child('each', 0);
    first.complete('pick', {});
    first.complete('send', {});
    h.cancel();
    // Item 2 is being reverted; item 0 was past its pivot, so it refused the cancel and goes on.
    expect(Object.keys(h.snapshot.tasks).sort()).toEqual(['each[0]', 'each[2]:compensate']);
    expect(first.status).toBe('running');
    first.complete('pack', {});
    h.child('each', 2).compensate('pick');
    expect(h.status).toBe('cancelled');
    expect(h.snapshot.steps['each']?.status).toBe('compensated');
    expect(h.tree.map((x) => [x.id, x.status])).toEqual([
      ['r', 'cancelled'],
      ['r/1/each/1/0', 'completed'],
      ['r/1/each/1/1', 'completed'],
      ['r/1/each/1/2', 'cancelled'],
    ]);
    expect(h.child('each', 1).events.some((e) => e.type === 'revert')).toBe(false);
  });
});

const stuck = defineWorkflow({
  name: 'stuck',
  version: 1,
  start: 'pick',
  steps: {
    pick: { kind: 'task', handler: 'pick', compensate: 'unpick', next: 'pack' },
    pack: { kind: 'task', handler: 'pack' },
  },
});
const holder = defineWorkflow({
  name: 'holder',
  version: 1,
  start: 'sub',
  steps: {
    sub: { kind: 'child', workflow: 'stuck', timeoutMs: 1000, next: 'after' },
    after: { kind: 'task', handler: 'after' },
  },
});

describe('child steps', () => {
  it('whose child was aborted while being reverted park the compensation again on a requeue, not re-check forever', async () => {
    // The revert of an aborted child changes nothing and reports nothing: the parent's compensation
    // task was dispatched again at every deadline, for good. Now the child's end answers it.
    const runner = createRunner({
      kinds: [composition],
      store: createMemoryStore(),
      workflows: [holder, stuck],
      handlers: {
        pick: async () => ({}),
        pack: async () => ({}),
        unpick: async () => {
          throw new TaskError('warehouse offline', { retryable: false });
        },
        after: async () => {
          throw new TaskError('declined', { retryable: false });
        },
      },
    });
    const p = await runner.start('holder', 'h-1', {});
    const child = p.steps['sub']!.child!.id;
    expect((await runner.get(child))?.status).toBe('dlq'); // its revert could not undo `pick`
    await runner.abort(child, 'given up');
    expect(await runner.get('h-1')).toMatchObject({
      status: 'dlq',
      steps: { sub: { status: 'compensation-dlq' } },
    });
    await runner.requeue('h-1');
    await runner.idle();
    const after = (await runner.get('h-1'))!;
    expect({ status: after.status, tasks: after.tasks }).toEqual({ status: 'dlq', tasks: {} });
    expect(after.compensationError).toMatchObject({ step: 'sub', message: `child ${child} aborted` });
  });
});

// A child workflow that declares its input: a `sku` string.
const needsSku = {
  '~standard': {
    version: 1 as const,
    vendor: 'test',
    validate: (v: unknown) =>
      typeof (v as { sku?: unknown } | null)?.sku === 'string'
        ? { value: v }
        : { issues: [{ message: 'sku must be a string' }] },
  },
};
const strict = workflow('strict', 1).input(needsSku).task('go', { handler: 'go' }).build();
const caller = defineWorkflow({
  name: 'caller',
  version: 1,
  start: 'sub',
  steps: { sub: { kind: 'child', workflow: 'strict', input: { code: 'input.code' }, timeoutMs: 1000 } },
});

describe('a child whose declared input schema refuses what the step maps', () => {
  it('fails the step with INVALID_INPUT on a runner, instead of being tried again at every deadline', async () => {
    const store = createMemoryStore();
    const runner = createRunner({
      kinds: [composition],
      store,
      workflows: [caller, strict],
      handlers: { go: async () => 1 },
    });
    const s = await runner.start('caller', 'c-1', { code: 7 });
    expect(s.status).toBe('failed');
    expect(s.error).toMatchObject({ step: 'sub', code: 'INVALID_INPUT' });
    expect(s.error?.message).toContain('sku must be a string');
    expect(await store.load('c-1/1/sub/1')).toBeNull();
  });

  it('fails it the same way in the harness', () => {
    const h = createHarness(caller, { kinds: [composition], workflows: [strict], id: 'c-1' }).start({
      code: 7,
    });
    expect(h.status).toBe('failed');
    expect(h.snapshot.error).toMatchObject({ step: 'sub', code: 'INVALID_INPUT' });
    expect(h.children).toEqual([]);
  });
});

// A child or map pinned to a version of its workflow the runner does not register.
const payment = defineWorkflow({
  name: 'payment',
  version: 1,
  start: 'go',
  steps: { go: { kind: 'task', handler: 'go' } },
});
const pinnedChild = defineWorkflow({
  name: 'pins-child',
  version: 1,
  start: 'sub',
  steps: { sub: { kind: 'child', workflow: 'payment', version: 3, timeoutMs: 1000 } },
});
const pinnedMap = defineWorkflow({
  name: 'pins-map',
  version: 1,
  start: 'each',
  steps: { each: { kind: 'map', items: 'input.xs', workflow: 'payment', version: 2 } },
});

describe('a child or map pinned to a version the runner does not register', () => {
  it('is refused at createRunner with UNKNOWN_VERSION naming the step and version', () => {
    for (const [parent, named] of [
      [pinnedChild, 'pins-child v1 step sub: payment v3'],
      [pinnedMap, 'pins-map v1 step each: payment v2'],
    ] as const) {
      expect(() =>
        createRunner({
          kinds: [composition],
          store: createMemoryStore(),
          workflows: [parent, payment],
          handlers: { go: async () => 1 },
        }),
      ).toThrow(
        expect.objectContaining({ code: 'UNKNOWN_VERSION', message: expect.stringContaining(named) }),
      );
    }
  });

  it('is accepted once that version is registered', () => {
    const v3 = defineWorkflow({ ...payment, version: 3 });
    expect(() =>
      createRunner({
        kinds: [composition],
        store: createMemoryStore(),
        workflows: [pinnedChild, payment, v3],
        handlers: { go: async () => 1 },
      }),
    ).not.toThrow();
  });

  it('is refused by the harness too', () => {
    expect(() =>
      createHarness(pinnedChild, { kinds: [composition], workflows: [payment] }).start({}),
    ).toThrow(expect.objectContaining({ code: 'UNKNOWN_VERSION' }));
  });
});
