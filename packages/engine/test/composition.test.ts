import { createRunner, defineWorkflow, type Snapshot, TaskError } from '@stepfold/engine';
import '@stepfold/engine/composition';
import { createMemoryStore } from '@stepfold/engine/memory';
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
