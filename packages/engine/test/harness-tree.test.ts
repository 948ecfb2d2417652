import {
  composition,
  createHarness,
  createMemoryStore,
  createRunner,
  defineWorkflow,
  type Handler,
  type Snapshot,
  TaskError,
  type WorkflowHarness,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// The harness driving a tree: children started, reported, cancelled, reverted and stopped as the
// runner does it, checked against a runner on the memory store for the same workflows.

const line = defineWorkflow({
  name: 'line',
  version: 1,
  start: 'pick',
  steps: {
    pick: { kind: 'task', handler: 'pick', compensate: 'unpick', next: 'pack' },
    pack: { kind: 'task', handler: 'pack' },
  },
});
const shipping = defineWorkflow({
  name: 'shipping',
  version: 1,
  start: 'book',
  steps: {
    book: { kind: 'task', handler: 'book', compensate: 'unbook', next: 'sent' },
    sent: { kind: 'task', handler: 'send', pivot: true },
  },
});
const order = defineWorkflow({
  name: 'order',
  version: 1,
  start: 'reserve',
  steps: {
    reserve: { kind: 'task', handler: 'reserve', compensate: 'release', next: 'lines' },
    lines: { kind: 'map', items: 'input.lines', workflow: 'line', maxConcurrency: 2, next: 'ship' },
    ship: { kind: 'child', workflow: 'shipping', input: { to: 'input.to' }, next: 'charge' },
    charge: { kind: 'task', handler: 'charge' },
  },
});
const workflows = [line, shipping] as const;

function handlers(calls: string[], failSku?: string, failCharge = false): Record<string, Handler> {
  const sku = (input: unknown) => (input as { sku: string }).sku;
  return {
    reserve: async () => ({ r: 1 }),
    release: async () => void calls.push('release'),
    pick: async ({ input }) => {
      calls.push(`pick ${sku(input)}`);
      if (sku(input) === failSku) throw new TaskError('none left', { code: 'OUT', retryable: false });
      return { picked: sku(input) };
    },
    unpick: async ({ input }) => void calls.push(`unpick ${sku(input)}`),
    pack: async ({ outputs }) => ({ packed: (outputs['pick'] as { picked: string }).picked }),
    book: async () => ({ slot: 7 }),
    unbook: async () => void calls.push('unbook'),
    send: async () => ({ sent: true }),
    charge: async () => {
      if (failCharge) throw new TaskError('declined', { code: 'DECLINED', retryable: false });
      return { paid: true };
    },
  };
}

const input = (n: number) => ({ lines: Array.from({ length: n }, (_, i) => ({ sku: `s${i}` })), to: 'here' });

/** Every instance of the tree holds nothing in flight once ended and replays to its snapshot. */
function expectReplays(h: WorkflowHarness): void {
  for (const x of h.tree) expect(JSON.stringify(x.replayed()), x.id).toBe(JSON.stringify(x.snapshot));
}

/** The same start on a runner over the memory store: each instance's status by id, and the calls. */
async function onRunner(id: string, data: unknown, failSku?: string) {
  const calls: string[] = [];
  const store = createMemoryStore();
  const runner = createRunner({
    kinds: [composition],
    store,
    workflows: [order, ...workflows],
    handlers: handlers(calls, failSku),
  });
  await runner.start('order', id, data);
  const statuses: Record<string, string> = {};
  for (const s of (await store.list({ limit: 100 })).items) statuses[s.id] = s.status;
  return { calls, statuses };
}

describe('the harness drives a tree', () => {
  it('runs a map of child workflows and a child step to completion, each child its own instance', async () => {
    const calls: string[] = [];
    const h = createHarness(order, { kinds: [composition], workflows, id: 'o-1' }).start(input(3));
    await h.run(handlers(calls), { timers: 'advance' });
    expect(h.status).toBe('completed');
    expect(h.children.map((c) => c.id)).toEqual([
      'o-1/1/lines/1/0',
      'o-1/1/lines/1/1',
      'o-1/1/lines/1/2',
      'o-1/1/ship/1',
    ]);
    expect(h.child('lines', 1).output('pack')).toEqual({ packed: 's1' });
    expect(h.child('lines', 1).snapshot.parent).toMatchObject({ id: 'o-1', step: 'lines', item: 1 });
    expect(h.child('ship').snapshot.input).toEqual({ to: 'here' });
    expect(h.child('o-1/1/ship/1')).toBe(h.child('ship'));
    expect(h.output('ship')).toEqual({ sent: true });
    expect(h.output('lines')).toMatchObject({ total: 3, completed: 3, children: 'o-1/1/lines/1/' });
    expectReplays(h);
    const runner = await onRunner('o-1', input(3));
    expect(Object.fromEntries(h.tree.map((x) => [x.id, x.status]))).toEqual(runner.statuses);
  });

  it('rolls a failed map back: each completed child reverted once, as the runner does', async () => {
    const calls: string[] = [];
    const h = createHarness(order, { kinds: [composition], workflows, id: 'o-2' }).start(input(5));
    await h.run(handlers(calls, 's3'), { timers: 'advance' });
    expect(h.status).toBe('failed');
    const runner = await onRunner('o-2', input(5), 's3');
    expect(Object.fromEntries(h.tree.map((x) => [x.id, x.status]))).toEqual(runner.statuses);
    // Which items ran before the failure depends on the runner's timing; either way each child that
    // picked was undone once, and the reservation released once.
    for (const run of [calls, runner.calls]) {
      const picked = run.filter((c) => c.startsWith('pick ') && c !== 'pick s3').map((c) => c.slice(5));
      const unpicked = run.filter((c) => c.startsWith('unpick ')).map((c) => c.slice(7));
      expect(unpicked.sort()).toEqual(picked.sort());
      expect(run.filter((c) => c === 'release')).toHaveLength(1);
    }
    expect(h.child('lines', 0).events.filter((e) => e.type === 'revert')).toHaveLength(1);
    expectReplays(h);
  });

  it('cancels children whose task the parent detached, and undoes what they did', async () => {
    const calls: string[] = [];
    const h = createHarness(order, { kinds: [composition], workflows, id: 'o-3' }).start(input(2));
    h.complete('reserve', { r: 1 });
    const first = h.child('lines', 0);
    first.complete('pick', { picked: 's0' });
    expect(h.cancel('changed my mind')).toBe(true);
    expect(first.status).toBe('compensating');
    await h.run(handlers(calls), { timers: 'advance' });
    expect(h.status).toBe('cancelled');
    expect(first.status).toBe('cancelled');
    // The second child never picked: its cancel had nothing to undo.
    expect(h.child('lines', 1).status).toBe('cancelled');
    expect(calls.sort()).toEqual(['release', 'unpick s0']);
    expectReplays(h);
  });

  it('aborts the children still running when the parent is aborted', () => {
    const h = createHarness(order, { kinds: [composition], workflows, id: 'o-4' }).start(input(3));
    h.complete('reserve', { r: 1 });
    h.abort('stop');
    expect(h.children.map((c) => c.status)).toEqual(['aborted', 'aborted']);
    expect(h.children.every((c) => c.snapshot.tasks && Object.keys(c.snapshot.tasks).length === 0)).toBe(
      true,
    );
  });

  it("past a child's pivot the parent refuses a cancel and writes nothing", async () => {
    const h = createHarness(order, { kinds: [composition], workflows, id: 'o-5' }).start(input(0));
    h.complete('reserve', { r: 1 });
    const ship = h.child('ship');
    ship.complete('book', { slot: 7 });
    ship.complete('sent', { sent: true });
    const ended = h.events.at(-1)!;
    expect(ended).toMatchObject({ type: 'child.ended', status: 'completed', pivot: true, child: ship.id });
    const before = h.snapshot;
    expect(() => h.cancel()).toThrow(expect.objectContaining({ code: 'PAST_PIVOT' }));
    expect(h.snapshot).toBe(before);
    // A failure after the pivot parks in dlq instead of rolling back.
    h.fail('charge', { message: 'declined', retryable: false });
    expect(h.status).toBe('dlq');
    expect(ship.status).toBe('completed');
  });

  it('with manual effects, a lost report is recovered when the parent task deadline passes', () => {
    const h = createHarness(order, { kinds: [composition], workflows, id: 'o-6', effects: 'manual' }).start(
      input(0),
    );
    h.complete('reserve', { r: 1 });
    expect(h.effects.map((e) => e.kind)).toEqual(['task']);
    h.perform();
    const ship = h.child('ship');
    ship.complete('book', { slot: 1 });
    ship.complete('sent', { sent: true });
    expect(h.effects).toMatchObject([{ kind: 'report', instance: ship.id }]);
    expect(h.drop()?.kind).toBe('report');
    expect(h.snapshot.tasks['ship']).toMatchObject({ handler: '$child', attempt: 1 });
    h.advance(300_000);
    // Dispatched again: its effect finds the child ended and reports it.
    expect(h.snapshot.tasks['ship']).toMatchObject({ attempt: 2 });
    h.settle();
    expect(h.snapshot.steps['ship']?.status).toBe('completed');
    // Performing the old report again changes nothing: the task it answers is gone.
    const again = {
      kind: 'report' as const,
      instance: ship.id,
      to: ship.snapshot.parent!,
      snapshot: ship.snapshot,
    };
    const version = h.snapshot.version;
    h.perform(again);
    expect(h.snapshot.version).toBe(version);
    expect(h.events.filter((e) => e.type === 'child.ended')).toHaveLength(1);
  });

  it('creates a child the parent stopped before its start effect ran, ended, so the late start starts nothing', () => {
    const h = createHarness(order, { kinds: [composition], workflows, id: 'o-7', effects: 'manual' }).start(
      input(1),
    );
    h.complete('reserve', { r: 1 });
    const start = h.effects[0]!;
    h.drop();
    h.abort();
    h.settle();
    const child = h.child('lines', 0);
    expect(child.status).toBe('aborted');
    expect(child.events.map((e) => e.type)).toEqual(['start', 'abort']);
    h.perform(start);
    expect(child.events).toHaveLength(2);
  });

  it('keeps $child tasks for the test when no workflows are given', () => {
    const h = createHarness(order, { kinds: [composition], id: 'o-8' }).start(input(0));
    h.complete('reserve', { r: 1 });
    expect(h.children).toEqual([]);
    const task = h.snapshot.tasks['ship']!;
    h.send({
      type: 'child.ended',
      step: 'ship',
      key: task.idempotencyKey,
      child: task.child!,
      status: 'completed',
      output: { sent: true },
    });
    expect(h.snapshot.steps['ship']?.status).toBe('completed');
  });

  it('every child reports to its parent through the same event the runner writes', async () => {
    const store = createMemoryStore();
    const runner = createRunner({
      kinds: [composition],
      store,
      workflows: [order, ...workflows],
      handlers: handlers([]),
    });
    const s = await runner.start('order', 'o-9', input(1));
    const h = createHarness(order, { kinds: [composition], workflows, id: 'o-9' }).start(input(1));
    await h.run(handlers([]), { timers: 'advance' });
    const shape = (x: Snapshot) =>
      x.log.filter((l) => l.type === 'step.completed').map((l) => [l.step, l.detail]);
    expect(shape(h.snapshot)).toEqual(shape(s));
    expect(h.snapshot.steps['ship']).toMatchObject({
      child: s.steps['ship']!.child,
      output: s.steps['ship']!.output,
    });
  });
});
