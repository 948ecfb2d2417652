import { defineWorkflow, makeTestSnapshot, type Snapshot, type TaskState } from '@stepfold/engine';

// Hand-built snapshots of parents and children, of the shapes the child and map kinds write
// (`steps[id].child`, `steps[id].map`, `tasks['step[i]']`, `parent`): the tools render them
// without running the composition rules.

/** One line of an order, shipped as its own instance. */
export const shipLine = defineWorkflow({
  name: 'ship-line',
  version: 1,
  start: 'pick',
  steps: { pick: { kind: 'task', handler: 'pick' } },
});

/** reserve → sub (a child) → lines (a map of 500 child workflows) → sums (a handler map). */
export const parentOrder = defineWorkflow({
  name: 'order',
  version: 1,
  start: 'reserve',
  steps: {
    reserve: { kind: 'task', handler: 'reserve', next: 'sub' },
    sub: { kind: 'child', workflow: 'ship-line', next: 'lines' },
    lines: {
      kind: 'map',
      items: 'input.lines',
      workflow: 'ship-line',
      maxConcurrency: 20,
      tolerated: { count: 10 },
      next: 'sums',
    },
    sums: { kind: 'map', items: 'input.numbers', handler: 'double', maxConcurrency: 4 },
  },
});

/** A snapshot with the given parts over an empty, running instance of `def`. */
export function snapshotOf(
  def: { name: string; version: number },
  id: string,
  parts: Partial<Snapshot> = {},
): Snapshot {
  const at = 1_700_000_000_000;
  const workflow = { name: def.name, version: def.version, hash: 'fixture' };
  return makeTestSnapshot(id, { workflow, version: 7, input: {}, createdAt: at, updatedAt: at, ...parts });
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

/** The running items 40..59 of `lines`, each a `$child` task naming its child instance. */
function lineTasks(id: string): Record<string, TaskState> {
  return Object.fromEntries(
    range(40, 60).map((i) => [
      `lines[${i}]`,
      {
        step: 'lines',
        phase: 'run',
        attempt: 1,
        idempotencyKey: `${id}/1/lines/1/${i}`,
        item: i,
        child: `${id}/1/lines/1/${i}`,
        handler: '$child',
        dispatchedAt: 1_700_000_000_000,
        deadline: 1_700_000_300_000,
        dispatchVersion: 6,
      } satisfies TaskState,
    ]),
  );
}

/**
 * An order `id` whose child step completed and whose map of 500 lines is under way: 60 dispatched,
 * 37 done, 3 failed (4, 17, 33), 20 running (40..59).
 */
export function parentMidway(id = 'o-1'): Snapshot {
  const at = 1_700_000_000_000;
  return snapshotOf(parentOrder, id, {
    input: { lines: range(0, 500).map((i) => ({ sku: `L${i}` })), numbers: [1, 2, 3] },
    active: ['lines'],
    completed: ['reserve', 'sub'],
    steps: {
      reserve: { status: 'completed', iteration: 1, attempt: 1, startedAt: at, finishedAt: at, output: {} },
      sub: {
        status: 'completed',
        iteration: 1,
        attempt: 1,
        startedAt: at,
        finishedAt: at,
        output: { picked: 'A' },
        child: { id: `${id}/1/sub/1` },
      },
      lines: {
        status: 'active',
        iteration: 1,
        attempt: 0,
        startedAt: at,
        map: { total: 500, next: 60, running: range(40, 60), failed: [4, 17, 33], ok: 37 },
      },
    },
    tasks: lineTasks(id),
  });
}

/** An order `id` waiting on its child step: the child task is in flight. */
export function parentAtChild(id = 'o-2'): Snapshot {
  const at = 1_700_000_000_000;
  const child = `${id}/1/sub/1`;
  return snapshotOf(parentOrder, id, {
    active: ['sub'],
    completed: ['reserve'],
    steps: {
      reserve: { status: 'completed', iteration: 1, attempt: 1, startedAt: at, finishedAt: at, output: {} },
      sub: { status: 'active', iteration: 1, attempt: 1, startedAt: at, child: { id: child } },
    },
    tasks: {
      sub: {
        step: 'sub',
        phase: 'run',
        attempt: 1,
        idempotencyKey: child,
        child,
        handler: '$child',
        dispatchedAt: at,
        deadline: at + 300_000,
        dispatchVersion: 3,
      },
    },
  });
}

/** A child of `parent` (a map item when `item` is given), in `status`. */
export function childOf(parent: Snapshot, step: string, status: Snapshot['status'], item?: number): Snapshot {
  const id = `${parent.id}/1/${step}/1${item === undefined ? '' : `/${item}`}`;
  return snapshotOf(shipLine, id, {
    status,
    parent: {
      id: parent.id,
      workflow: parent.workflow.name,
      step,
      key: id,
      ...(item === undefined ? {} : { item }),
    },
  });
}
