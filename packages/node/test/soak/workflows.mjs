// @ts-check
// The soak's workflows, their flaky handlers and each instance's designed outcome. Plain ESM (with
// JSDoc types, checked by tsc through checkJs): the forked worker processes run plain node, which
// cannot load TypeScript on Node 20, and the driver imports the same definitions.
import { setTimeout as sleep } from 'node:timers/promises';
import { composition, defineWorkflow, flowControl, TaskError, workflow } from '@stepfold/engine';

/** The tree workload's child and map steps and the flow workload's limits: every runner of the soak (driver and workers) passes these kinds. */
export const KINDS = [composition, flowControl];

/**
 * Handler deadline: short, so the tasks of a SIGKILLed worker come back within seconds. The same
 * on every store, FerretDB included: a deadline long enough to hide a slow store would also hide a
 * worker that cannot keep up with short deadlines.
 */
export const TIMEOUT_MS = 2000;

/**
 * Deadline of the tree workload's child and map steps: how long a parent waits for a child's end
 * before it looks at the child itself. Short, so a child whose start or whose end report died with
 * its worker is found within a second or two.
 */
export const CHILD_CHECK_MS = 1000;

/** Child workflows each tree's map step starts (besides the one of its child step). */
export const TREE_ITEMS = 4;

// Generous attempts: besides its designed failures (at most 2), a step loses one attempt to every
// kill that hits it while running, and a designed-to-succeed step must never run out.
const RETRY = { maxAttempts: 12, initialMs: 50, factor: 2, maxMs: 400, jitter: 0.2 };
/** @param {number} timeoutMs */
const optionsFor = (timeoutMs) => ({ defaults: { retry: RETRY, timeoutMs } });

/**
 * The soak's workflows with handler deadlines of `timeoutMs` (driver and workers must agree: the
 * deadline is part of the definition, so of its hash).
 * @param {number} [timeoutMs]
 */
export function soakWorkflows(timeoutMs = TIMEOUT_MS) {
  const options = optionsFor(timeoutMs);
  /** reserve → parallel [charge, pack] → ship; `release` and `refund` undo reserve and charge. */
  const order = workflow('soak-order', 1, options)
    .task('reserve', { handler: 'reserve', compensate: 'release' })
    .parallel('fulfil', { branches: ['charge', 'pack'], next: 'ship' })
    .task('charge', { handler: 'charge', compensate: 'refund', end: true })
    .task('pack', { handler: 'pack', end: true })
    .task('ship', { handler: 'ship' })
    .build();

  /** A durable sleep, flight, a savepoint, parallel [hotel, car], confirm: a failed confirm keeps the flight. */
  const trip = workflow('soak-trip', 1, options)
    .sleep('pause', { ms: 300 })
    .task('flight', { handler: 'bookFlight', compensate: 'cancelFlight' })
    .savepoint('booked')
    .parallel('stay', { branches: ['hotel', 'car'], next: 'confirm' })
    .task('hotel', { handler: 'bookHotel', compensate: 'cancelHotel', end: true })
    .task('car', { handler: 'bookCar', compensate: 'cancelCar', end: true })
    .task('confirm', { handler: 'confirm' })
    .build();

  /** reserve, then a wait for the driver's `go` signal (or its cancel), then commit. */
  const hold = workflow('soak-hold', 1, options)
    .task('reserve', { handler: 'reserve', compensate: 'release' })
    .wait('decide', { signal: 'go', timeoutMs: 3_600_000 })
    .task('commit', { handler: 'commit' })
    .build();

  /** The tree workload's child: one step, undone when its parent rolls back (a revert). */
  const leaf = defineWorkflow({
    name: 'soak-leaf',
    version: 1,
    ...options,
    start: 'work',
    steps: { work: { kind: 'task', handler: 'leafWork', compensate: 'leafUndo' } },
  });

  /**
   * A child step, a map of TREE_ITEMS child workflows (two at a time), then `finish`. Every child
   * gets its fate in its input (`input.sub`, the items), so a child's failure is designed too.
   */
  const tree = defineWorkflow({
    name: 'soak-tree',
    version: 1,
    ...options,
    start: 'sub',
    steps: {
      sub: {
        kind: 'child',
        workflow: 'soak-leaf',
        input: 'input.sub',
        timeoutMs: CHILD_CHECK_MS,
        next: 'fan',
      },
      fan: {
        kind: 'map',
        items: 'input.items',
        workflow: 'soak-leaf',
        maxConcurrency: 2,
        timeoutMs: CHILD_CHECK_MS,
        next: 'finish',
      },
      finish: { kind: 'task', handler: 'finish' },
    },
  });

  return /** @type {const} */ ([order, trip, hold, leaf, tree]);
}

/** Every soak workflow, with the default deadline. */
export const WORKFLOWS = soakWorkflows();
/** The order workflow (default deadline). */
export const order = WORKFLOWS[0];

/**
 * @typedef {{ fate: 'ok' | 'fail' | 'cancel', failAt?: string }} SoakInput
 * @typedef {{ id: string, step: string, item?: number, status: string, compensated: string[] }} ChildDesign
 *   a child a tree starts: its id, the parent step (and map item) that starts it, its designed end
 * @typedef {{ workflow: string, input: SoakInput, status: string, compensated: string[],
 *   children?: ChildDesign[] }} Design
 */

/**
 * The instance number `i`'s workflow, input and designed end: which status, which steps compensated.
 * Only failures whose rollback is deterministic are designed (a failing parallel branch would make
 * the other branch's compensation depend on timing, unless that branch has nothing to undo).
 * @param {number} i
 * @returns {Design}
 */
export function design(i) {
  const roll = i % 10;
  switch (i % 3) {
    case 0:
      if (roll === 3) return d('soak-order', 'fail', 'charge', 'failed', ['reserve']);
      if (roll === 6) return d('soak-order', 'fail', 'ship', 'failed', ['charge', 'reserve']);
      return d('soak-order', 'ok', undefined, 'completed', []);
    case 1:
      if (roll === 4 || roll === 7) return d('soak-trip', 'fail', 'confirm', 'failed', ['hotel', 'car']);
      return d('soak-trip', 'ok', undefined, 'completed', []);
    default:
      if (roll === 2 || roll === 5) return d('soak-hold', 'cancel', undefined, 'cancelled', ['reserve']);
      return d('soak-hold', 'ok', undefined, 'completed', []);
  }
}

/**
 * @param {string} workflow @param {SoakInput['fate']} fate @param {string | undefined} failAt
 * @param {string} status @param {string[]} compensated
 * @returns {Design}
 */
function d(workflow, fate, failAt, status, compensated) {
  return { workflow, input: failAt ? { fate, failAt } : { fate }, status, compensated };
}

/**
 * Tree number `j` (instance id `id`): its input, designed end and children. Most complete (every
 * child completed); one in five fails at `finish`, so the map's children and the child step's child
 * are reverted (each ends cancelled, its work undone); one in five has the child step's child fail
 * for good, so the parent fails with nothing to undo and its map never starts.
 * @param {number} j @param {string} id
 * @returns {Design}
 */
export function treeDesign(j, id) {
  const fate = j % 5 === 2 ? 'fail' : j % 5 === 4 ? 'child-fails' : 'ok';
  const ok = { fate: 'ok' };
  const sub = fate === 'child-fails' ? { fate: 'fail', failAt: 'work' } : ok;
  /** @param {string} step @param {number | undefined} item @returns {ChildDesign} */
  const child = (step, item) => ({
    id: `${id}/1/${step}/1${item === undefined ? '' : `/${item}`}`,
    step,
    ...(item === undefined ? {} : { item }),
    status: fate === 'fail' ? 'cancelled' : fate === 'child-fails' ? 'failed' : 'completed',
    compensated: fate === 'fail' ? ['work'] : [],
  });
  const children = [child('sub', undefined)];
  if (fate !== 'child-fails') for (let i = 0; i < TREE_ITEMS; i++) children.push(child('fan', i));
  return {
    workflow: 'soak-tree',
    input: /** @type {SoakInput} */ ({
      fate: fate === 'fail' ? 'fail' : 'ok',
      ...(fate === 'fail' ? { failAt: 'finish' } : {}),
      sub,
      items: Array.from({ length: TREE_ITEMS }, () => ok),
    }),
    status: fate === 'ok' ? 'completed' : 'failed',
    compensated: fate === 'fail' ? ['fan', 'sub'] : [],
    children,
  };
}

/**
 * FNV-1a of a string: how many leading attempts of a handler fail, stable per instance and step.
 * @param {string} text
 */
export function hash(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * @typedef {{ instance: string, step: string, phase: string, attempt: number, key: string, outcome: string }} Call
 * @typedef {(call: Call) => void} CallLog
 */

/**
 * The handlers of every soak workflow. Each fails its first 0-2 attempts (from a hash of instance,
 * step and phase), takes a few ms, and records every call in `log` before it returns, so a
 * side effect whose result the runner wrote is always on record. The step an instance's input names
 * in `failAt` then fails for good (non-retryable), which starts the rollback.
 * @param {CallLog} log
 */
export function soakHandlers(log) {
  /** @param {import('@stepfold/engine').HandlerContext} ctx */
  const act = async (ctx) => {
    const { instanceId: instance, step, phase, attempt, idempotencyKey: key } = ctx;
    const call = { instance, step, phase, attempt, key };
    await sleep(2 + (hash(`${key}#${attempt}`) % 20));
    if (attempt <= hash(`${instance}/${step}/${phase}`) % 3) {
      log({ ...call, outcome: 'flaky' });
      throw new TaskError(`${step} flaked (attempt ${attempt})`, { code: 'FLAKY' });
    }
    const input = /** @type {SoakInput} */ (ctx.workflowInput);
    if (phase === 'run' && input.fate === 'fail' && input.failAt === step) {
      log({ ...call, outcome: 'fatal' });
      throw new TaskError(`${step} refused for good`, { code: 'DECLINED', retryable: false });
    }
    log({ ...call, outcome: 'ok' });
    return { step, phase, attempt, pid: process.pid };
  };
  return {
    reserve: act,
    release: act,
    charge: act,
    refund: act,
    pack: act,
    ship: act,
    bookFlight: act,
    cancelFlight: act,
    bookHotel: act,
    cancelHotel: act,
    bookCar: act,
    cancelCar: act,
    confirm: act,
    commit: act,
    leafWork: act,
    leafUndo: act,
    finish: act,
  };
}
