import {
  composition,
  createMemoryStore,
  createRunner,
  defineWorkflow,
  type Snapshot,
  type Store,
  TaskError,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// Child workflows and map steps through a runner on the memory store: the effects the reducer asks
// for (start a child, report its end, cancel or revert it) done for real, end to end.

const shipLine = defineWorkflow({
  name: 'ship-line',
  version: 1,
  start: 'pick',
  steps: {
    pick: { kind: 'task', handler: 'pick', compensate: 'unpick', next: 'pack' },
    pack: { kind: 'task', handler: 'pack' },
  },
});

const order = defineWorkflow({
  name: 'order',
  version: 1,
  start: 'reserve',
  steps: {
    reserve: { kind: 'task', handler: 'reserve', compensate: 'release', next: 'lines' },
    lines: { kind: 'map', items: 'input.lines', workflow: 'ship-line', maxConcurrency: 3, next: 'charge' },
    charge: { kind: 'task', handler: 'charge' },
  },
});

const withChild = defineWorkflow({
  name: 'parent',
  version: 1,
  start: 'sub',
  steps: {
    sub: { kind: 'child', workflow: 'ship-line', input: { sku: 'input.sku' }, next: 'after' },
    after: { kind: 'task', handler: 'after', input: 'outputs.sub' },
  },
});

const sums = defineWorkflow({
  name: 'sums',
  version: 1,
  start: 'each',
  steps: {
    each: {
      kind: 'map',
      items: 'input.numbers',
      handler: 'double',
      compensate: 'undouble',
      input: { n: 'item', at: 'index' },
      maxConcurrency: 4,
      tolerated: { count: 1 },
      retry: { maxAttempts: 2, initialMs: 1 },
    },
  },
});

/** Ticks the instance (retry timers, lost tasks) until it ends; the runner alone does not. */
async function drive(runner: { tick(id: string, now?: number): Promise<Snapshot> }, s: Snapshot) {
  for (let i = 0; i < 50 && !['completed', 'failed', 'cancelled', 'aborted'].includes(s.status); i++)
    s = await runner.tick(s.id, (s.wakeAt ?? Date.now()) + 1);
  return s;
}

function harness(failOn: (sku: string) => boolean = () => false) {
  const calls: string[] = [];
  const store = createMemoryStore();
  const runner = createRunner({
    kinds: [composition],
    store,
    workflows: [shipLine, order, withChild, sums],
    handlers: {
      pick: async ({ input }) => {
        const sku = (input as { sku: string }).sku;
        calls.push(`pick ${sku}`);
        if (failOn(sku)) throw new TaskError(`no ${sku}`, { code: 'OUT_OF_STOCK', retryable: false });
        return { picked: sku };
      },
      unpick: async ({ input }) => {
        calls.push(`unpick ${(input as { sku: string }).sku}`);
      },
      pack: async ({ outputs }) => ({ packed: (outputs['pick'] as { picked: string }).picked }),
      reserve: async () => ({ id: 'R1' }),
      release: async () => {
        calls.push('release');
      },
      charge: async () => ({ ok: true }),
      after: async ({ input }) => ({ saw: input }),
      double: async ({ input, attempt }) => {
        const { n, at } = input as { n: number; at: number };
        if (n < 0 && attempt === 1) throw new Error('flaky');
        if (n === 13) throw new TaskError('thirteen', { code: 'UNLUCKY', retryable: false });
        calls.push(`double ${at}`);
        return n * 2;
      },
      undouble: async ({ input }) => {
        calls.push(`undouble ${(input as { at: number }).at}`);
      },
    },
  });
  return { runner, store, calls };
}

describe('child step', () => {
  it('starts the child with a deterministic id, waits for it, and takes its output', async () => {
    const { runner, store } = harness();
    const s = await runner.start('parent', 'p-1', { sku: 'A' });
    expect(s.status).toBe('completed');
    expect(s.output).toEqual({ saw: { packed: 'A' } });
    const childId = s.steps['sub']!.child!.id;
    expect(childId).toBe('p-1/1/sub/1');
    const child = (await store.load(childId)) as Snapshot;
    expect(child.status).toBe('completed');
    expect(child.parent).toMatchObject({ id: 'p-1', step: 'sub' });
  });

  it("fails the step when the child fails, under the parent's policy", async () => {
    const { runner } = harness((sku) => sku === 'B');
    const s = await runner.start('parent', 'p-2', { sku: 'B' });
    expect(s.status).toBe('failed');
    expect(s.error).toMatchObject({ step: 'sub', code: 'OUT_OF_STOCK' });
  });
});

describe('map step', () => {
  it('runs handler items with bounded concurrency, retries, tolerates, and keeps item order', async () => {
    const { runner } = harness();
    const s = await drive(runner, await runner.start('sums', 'm-1', { numbers: [1, -2, 3, 13, 5, 6] }));
    expect(s.status).toBe('completed');
    expect(s.output).toEqual([2, -4, 6, null, 10, 12]);
    expect(s.steps['each']!.map).toMatchObject({ total: 6, ok: 5, failed: [3], running: [] });
  });

  it('fails past the tolerance and compensates every completed item once', async () => {
    const { runner, calls } = harness();
    const s = await drive(runner, await runner.start('sums', 'm-2', { numbers: [1, 13, 2, 13, 4, 5, 6, 7] }));
    expect(s.status).toBe('failed');
    const doubled = calls.filter((c) => c.startsWith('double ')).map((c) => c.slice(7));
    const undone = calls.filter((c) => c.startsWith('undouble ')).map((c) => c.slice(9));
    expect([...undone].sort()).toEqual([...doubled].sort());
    expect(new Set(undone).size).toBe(undone.length);
  });

  it('fans out over child workflows and rolls each completed child back when one fails', async () => {
    const { runner, store, calls } = harness((sku) => sku === 'L3');
    const lines = Array.from({ length: 7 }, (_, i) => ({ sku: `L${i}` }));
    const s = await runner.start('order', 'o-1', { lines });
    expect(s.status).toBe('failed');
    const picked = calls.filter((c) => c.startsWith('pick ') && c !== 'pick L3').map((c) => c.slice(5));
    const unpicked = calls.filter((c) => c.startsWith('unpick ')).map((c) => c.slice(7));
    expect([...unpicked].sort()).toEqual([...picked].sort());
    expect(calls.filter((c) => c === 'release')).toHaveLength(1);
    for (const sku of picked) {
      const i = Number(sku.slice(1));
      const child = (await store.load(`o-1/1/lines/1/${i}`)) as Snapshot;
      expect(child.status).toBe('cancelled');
    }
  });

  it('completes over child workflows with a summary that says where the children are', async () => {
    const { runner, store } = harness();
    const lines = Array.from({ length: 5 }, (_, i) => ({ sku: `K${i}` }));
    const s = await runner.start('order', 'o-2', { lines });
    expect(s.status).toBe('completed');
    const out = s.steps['lines']!.output as { total: number; completed: number; children: string };
    expect(out).toMatchObject({ total: 5, completed: 5, failed: [] });
    const child = (await store.load(`${out.children}4`)) as Snapshot;
    expect(child.output).toEqual({ packed: 'K4' });
  });
});

describe('child step: ids, compensation, pivots, stopping', () => {
  const leaf = defineWorkflow({
    name: 'leaf',
    version: 1,
    start: 'work',
    steps: { work: { kind: 'task', handler: 'work', compensate: 'undoWork' } },
  });
  const pivotal = defineWorkflow({
    name: 'pivotal',
    version: 1,
    start: 'commit',
    steps: { commit: { kind: 'task', handler: 'work', pivot: true } },
  });
  const tree = defineWorkflow({
    name: 'tree',
    version: 1,
    start: 'a',
    steps: {
      a: { kind: 'child', workflow: 'leaf', childId: 'input.childId', next: 'b' },
      b: { kind: 'child', workflow: 'leaf', compensate: 'ownUndo', next: 'gate' },
      gate: { kind: 'wait', signal: 'go' },
    },
  });
  const pivotTree = defineWorkflow({
    name: 'pivot-tree',
    version: 1,
    start: 'p',
    steps: {
      p: { kind: 'child', workflow: 'pivotal', next: 'gate' },
      gate: { kind: 'wait', signal: 'go' },
    },
  });
  const race = defineWorkflow({
    name: 'race',
    version: 1,
    start: 'fork',
    steps: {
      fork: { kind: 'parallel', branches: ['fast', 'slow'], join: 'any' },
      fast: { kind: 'task', handler: 'work' },
      slow: { kind: 'child', workflow: 'hang' },
    },
  });
  const hang = defineWorkflow({
    name: 'hang',
    version: 1,
    start: 'wait',
    steps: { wait: { kind: 'wait', signal: 'never' } },
  });

  function setup() {
    const calls: string[] = [];
    const store = createMemoryStore();
    const runner = createRunner({
      kinds: [composition],
      store,
      workflows: [leaf, pivotal, tree, pivotTree, race, hang],
      handlers: {
        work: async ({ instanceId }) => {
          calls.push(`work ${instanceId}`);
          return { by: instanceId };
        },
        undoWork: async ({ instanceId }) => {
          calls.push(`undo ${instanceId}`);
        },
        ownUndo: async ({ instanceId, outputs }) => {
          calls.push(`own ${instanceId} ${JSON.stringify(outputs['b'])}`);
        },
      },
    });
    return { calls, store, runner };
  }

  it('takes the child id from a path, and compensates a child by reverting it or by its own handler', async () => {
    const { calls, store, runner } = setup();
    const s = await runner.start('tree', 't-1', { childId: 'order-7-shipment' });
    expect(s.status).toBe('waiting');
    expect(s.steps['a']!.child).toEqual({ id: 'order-7-shipment' });
    const cancelled = await runner.cancel('t-1');
    expect(cancelled.status).toBe('cancelled');
    // b has its own handler: it runs once, with the child's output; a's child is reverted.
    expect(calls).toContain('own t-1 {"by":"t-1/1/b/1"}');
    expect(calls.filter((c) => c === 'undo order-7-shipment')).toHaveLength(1);
    expect(calls.filter((c) => c.startsWith('undo t-1/1/b/1'))).toHaveLength(0);
    expect((await store.load('order-7-shipment'))?.status).toBe('cancelled');
    expect((await store.load('t-1/1/b/1'))?.status).toBe('completed');
  });

  it('fails the step with CHILD_ID_TAKEN when the id belongs to an unrelated instance', async () => {
    const { runner } = setup();
    await runner.start('leaf', 'taken', {});
    const s = await runner.start('tree', 't-2', { childId: 'taken' });
    expect(s.status).toBe('failed');
    expect(s.error).toMatchObject({ step: 'a', code: 'CHILD_ID_TAKEN' });
  });

  it("refuses the parent's cancel with PAST_PIVOT once a child completed past its pivot; abort still stops it", async () => {
    const { runner, store } = setup();
    const s = await runner.start('pivot-tree', 'pv-1', {});
    expect(s.steps['p']!.child).toEqual({ id: 'pv-1/1/p/1', pivot: true });
    const before = await store.load('pv-1');
    await expect(runner.cancel('pv-1')).rejects.toMatchObject({ code: 'PAST_PIVOT' });
    expect(await store.load('pv-1')).toEqual(before);
    expect((await runner.abort('pv-1')).status).toBe('aborted');
  });

  it('stops a child its parent no longer needs: cancelled when the parent completes, aborted when it aborts', async () => {
    const { runner, store } = setup();
    const s = await runner.start('race', 'r-1', {});
    expect(s.status).toBe('completed');
    expect((await store.load('r-1/1/slow/1'))?.status).toBe('cancelled');
    const t = await runner.start('tree', 'r-2', { childId: 'r-2-a' });
    expect(t.status).toBe('waiting');
    await runner.abort('r-2');
    // Its children had completed: nothing to stop, nothing reverted.
    expect((await store.load('r-2-a'))?.status).toBe('completed');
  });

  it('aborts a running child with its parent', async () => {
    const { runner, store } = setup();
    const wrap = defineWorkflow({
      name: 'wrap',
      version: 1,
      start: 'c',
      steps: { c: { kind: 'child', workflow: 'hang' } },
    });
    const r2 = createRunner({ kinds: [composition], store, workflows: [wrap, hang], handlers: {} });
    await r2.start('wrap', 'w-1', {});
    expect((await store.load('w-1/1/c/1'))?.status).toBe('waiting');
    await r2.abort('w-1', 'stop everything');
    expect((await store.load('w-1/1/c/1'))?.status).toBe('aborted');
    void runner;
  });

  it('refuses a runner whose definitions use child steps of an unregistered workflow', () => {
    expect(() =>
      createRunner({ kinds: [composition], store: createMemoryStore(), workflows: [tree], handlers: {} }),
    ).toThrow(expect.objectContaining({ code: 'UNKNOWN_WORKFLOW' }));
  });
});

describe('child step: crash windows recovered by the deadline', () => {
  const leaf = defineWorkflow({
    name: 'leaf2',
    version: 1,
    start: 'work',
    steps: { work: { kind: 'task', handler: 'work' } },
  });
  const parent = defineWorkflow({
    name: 'parent2',
    version: 1,
    start: 'c',
    steps: { c: { kind: 'child', workflow: 'leaf2', timeoutMs: 1000 } },
  });

  /** A memory store whose next create of a child, or next save of the parent, fails as a crash would leave it. */
  function flakyStore(fail: { create?: string | undefined; saveOf?: string | undefined }) {
    const inner = createMemoryStore();
    const store: Store = Object.create(inner);
    store.create = async (s) => {
      if (s.id === fail.create) {
        fail.create = undefined;
        throw new Error('worker killed before the child was created');
      }
      return inner.create(s);
    };
    store.save = async (s, v, o) => {
      if (s.id === fail.saveOf && s.steps['c']?.status === 'completed') {
        fail.saveOf = undefined;
        throw new Error('worker killed before the parent heard of its child');
      }
      return inner.save(s, v, o);
    };
    return store;
  }

  const handlers = { work: async () => ({ done: true }) };

  it("starts the child when the parent's dispatch was written but the child's create was lost", async () => {
    const store = flakyStore({ create: 'p-a/1/c/1' });
    const runner = createRunner({ kinds: [composition], store, workflows: [leaf, parent], handlers });
    const s = await runner.start('parent2', 'p-a', {});
    expect(s.status).toBe('running');
    expect(await store.load('p-a/1/c/1')).toBeNull();
    // The task's deadline passes: dispatched again, the child is created, runs, and reports.
    const after = await runner.tick('p-a', s.wakeAt! + 1);
    expect(after.status).toBe('completed');
    expect(after.output).toEqual({ done: true });
    expect((await store.load('p-a/1/c/1'))?.version).toBe(2);
  });

  it("takes the child's end when the report to the parent was lost", async () => {
    const store = flakyStore({ saveOf: 'p-b' });
    const runner = createRunner({ kinds: [composition], store, workflows: [leaf, parent], handlers });
    const s = await runner.start('parent2', 'p-b', {});
    expect(s.status).toBe('running');
    expect((await store.load('p-b/1/c/1'))?.status).toBe('completed');
    const after = await runner.tick('p-b', s.wakeAt! + 1);
    expect(after.status).toBe('completed');
    expect(after.output).toEqual({ done: true });
    // The child ran once: one create, one task, one result.
    expect((await store.load('p-b/1/c/1'))?.version).toBe(2);
  });
});

describe('tools read the pivot rule across the tree', () => {
  it('cancelRefusal says PAST_PIVOT for a parent whose child completed past its pivot', async () => {
    const { cancelRefusal } = await import('@stepfold/engine');
    const pivotal = defineWorkflow({
      name: 'pivotal-3',
      version: 1,
      start: 'commit',
      steps: { commit: { kind: 'task', handler: 'work', pivot: true } },
    });
    const top = defineWorkflow({
      name: 'top-3',
      version: 1,
      start: 'p',
      steps: {
        p: { kind: 'child', workflow: 'pivotal-3', next: 'gate' },
        gate: { kind: 'wait', signal: 'go' },
      },
    });
    const runner = createRunner({
      kinds: [composition],
      store: createMemoryStore(),
      workflows: [pivotal, top],
      handlers: { work: async () => null },
    });
    const s = await runner.start('top-3', 'top-1', {});
    expect(cancelRefusal(top, s)).toMatchObject({ code: 'PAST_PIVOT' });
    expect(cancelRefusal(top, s)!.message).toContain('a child of step p has completed past its own pivot');
  });
});

describe('map step: dlq and requeue', () => {
  it('parks a handler map in dlq; requeue retries only the failed items, with fresh attempts', async () => {
    let healthy = false;
    const seen: number[] = [];
    const parked = defineWorkflow({
      name: 'parked-map',
      version: 1,
      start: 'each',
      steps: {
        each: {
          kind: 'map',
          items: 'input.xs',
          handler: 'h',
          maxConcurrency: 2,
          onFailure: 'dlq',
          retry: { maxAttempts: 1 },
        },
      },
    });
    const runner = createRunner({
      kinds: [composition],
      store: createMemoryStore(),
      workflows: [parked],
      handlers: {
        h: async ({ input, attempt }) => {
          seen.push(input as number);
          if (input === 2 && !healthy) throw new Error('down');
          return { x: input, attempt };
        },
      },
    });
    const s = await runner.start('parked-map', 'pm-1', { xs: [0, 1, 2, 3] });
    expect(s.status).toBe('dlq');
    expect(s.steps['each']!.map).toMatchObject({ failed: [2], ok: 3 });
    healthy = true;
    const done = await runner.requeue('pm-1');
    expect(done.status).toBe('completed');
    const out = done.output as Array<{ x: number; attempt: number }>;
    expect(out.map((o) => o.x)).toEqual([0, 1, 2, 3]);
    expect(out[2]!.attempt).toBeGreaterThan(1000);
    // Items that completed before the requeue ran once.
    expect(seen.filter((x) => x !== 2).sort()).toEqual([0, 1, 3]);
  });

  it('after a requeue, gives items that never ran attempt 1, and counts their retries from there', async () => {
    let healthy = false;
    const attempts: Array<[number, number]> = [];
    const parked = defineWorkflow({
      name: 'parked-one-by-one',
      version: 1,
      start: 'each',
      steps: {
        each: {
          kind: 'map',
          items: 'input.xs',
          handler: 'h',
          maxConcurrency: 1,
          onFailure: 'dlq',
          retry: { maxAttempts: 2, initialMs: 1, jitter: 0 },
        },
      },
    });
    const runner = createRunner({
      kinds: [composition],
      store: createMemoryStore(),
      workflows: [parked],
      handlers: {
        h: async ({ input, attempt }) => {
          attempts.push([input as number, attempt]);
          if (input === 0 && !healthy) throw new TaskError('down', { retryable: false });
          if (input === 2 && attempt === 1) throw new Error('flaky');
          if (input === 3) throw new Error('always down');
          return input;
        },
      },
    });
    const s = await runner.start('parked-one-by-one', 'po-1', { xs: [0, 1, 2, 3] });
    expect(s.status).toBe('dlq');
    healthy = true;
    const after = await drive(runner, await runner.requeue('po-1'));
    // Item 3 fails its two attempts: parked again, its retries counted from its first attempt.
    expect(after.status).toBe('dlq');
    expect(attempts).toEqual([
      [0, 1],
      [0, 1001],
      [1, 1],
      [2, 1],
      [2, 2],
      [3, 1],
      [3, 2],
    ]);
  });

  it('waits for a child parked in dlq; requeuing the child lets the map finish', async () => {
    let healthy = false;
    const child = defineWorkflow({
      name: 'dlq-child',
      version: 1,
      onFailure: 'dlq',
      start: 'w',
      steps: { w: { kind: 'task', handler: 'w', retry: { maxAttempts: 1 } } },
    });
    const top = defineWorkflow({
      name: 'dlq-top',
      version: 1,
      start: 'each',
      steps: { each: { kind: 'map', items: 'input.xs', workflow: 'dlq-child', maxConcurrency: 3 } },
    });
    const store = createMemoryStore();
    const runner = createRunner({
      kinds: [composition],
      store,
      workflows: [child, top],
      handlers: {
        w: async ({ input }) => {
          if ((input as { n: number }).n === 1 && !healthy) throw new Error('down');
          return { ok: true };
        },
      },
    });
    const s = await runner.start('dlq-top', 'dt-1', { xs: [{ n: 0 }, { n: 1 }, { n: 2 }] });
    expect(s.status).toBe('running');
    expect(s.steps['each']!.map).toMatchObject({ ok: 2, running: [1] });
    healthy = true;
    await runner.requeue('dt-1/1/each/1/1');
    await runner.idle();
    const after = (await store.load('dt-1'))!;
    expect(after.status).toBe('completed');
    expect(after.output).toMatchObject({ total: 3, completed: 3, failed: [] });
  });
});
