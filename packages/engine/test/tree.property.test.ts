import {
  type ChildEffect,
  composition,
  createHarness,
  isTerminal,
  type WorkflowEvent,
  type WorkflowHarness,
} from '@stepfold/engine';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type CompiledTree,
  compileTree,
  type Intent,
  intentArb,
  type StepInfo,
  tolerates,
  treeArb,
} from './tree-gen.js';
import { type InstanceModel, modelOf, pastPivot, unitOf } from './tree-model.js';

// Random trees (a root, middle workflows and leaves: tasks, handler maps, child steps and workflow
// maps, with pivots, retries, tolerances and failure policies) driven by random results, effects
// performed out of order, lost and repeated, ticks, cancels, aborts and requeues on any instance;
// then finished like a patient operator would. The saga oracles must hold on every instance.

const RUNS = Number(process.env['STEPFOLD_TREES'] ?? 1000);
const SEED = Number(process.env['STEPFOLD_TREES_SEED'] ?? 28_2028);

type Tree = WorkflowHarness;

/** Every task of the tree a handler would run (a child's task is the harness's own effect). */
function handlerTasks(h: Tree) {
  return h.tree.flatMap((x) =>
    Object.keys(x.snapshot.tasks)
      .sort()
      .map((k) => ({ x, t: x.snapshot.tasks[k]! }))
      .filter(({ t }) => t.handler !== '$child'),
  );
}

/** A handler's result for a task, as a runner writes it (its attempt and key). */
function result(
  t: ReturnType<typeof handlerTasks>[number]['t'],
  ok: boolean,
  retryable: boolean,
): WorkflowEvent {
  const base = { at: 0, step: t.step, attempt: t.attempt, phase: t.phase, key: t.idempotencyKey };
  const at = t.item === undefined ? base : { ...base, item: t.item };
  if (!ok) return { type: 'task.failed', ...at, error: { message: 'boom', retryable } };
  const output =
    t.phase === 'compensate' ? undefined : t.item === undefined ? { by: t.step } : { item: t.item };
  return { type: 'task.completed', ...at, output };
}

function act(h: Tree, i: Intent, g: CompiledTree, compFailures: boolean, history: ChildEffect[]): void {
  const tree = h.tree;
  const pick = <T>(xs: readonly T[]) => xs[i.pick % xs.length];
  switch (i.kind) {
    case 'complete':
    case 'fail': {
      const one = pick(handlerTasks(h));
      if (!one) return;
      const ok = i.kind === 'complete' || (one.t.phase === 'compensate' && !compFailures);
      const { at: _, ...e } = result(one.t, ok, i.retryable);
      one.x.send(e as never);
      return;
    }
    case 'effect': {
      const n = h.effects.length;
      if (n === 0) return;
      history.push(h.effects[i.pick % n]!);
      h.perform(i.pick % n);
      return;
    }
    case 'drop': {
      // Only what a deadline recovers: a start, cancel or revert, or a report (not a parent's stop).
      const k = h.effects.findIndex(
        (e, j) => j >= i.pick % Math.max(1, h.effects.length) && e.kind !== 'stop',
      );
      if (k >= 0) h.drop(k);
      return;
    }
    case 'redo': {
      const e = pick(history);
      if (e) h.perform(e);
      return;
    }
    case 'tick': {
      if (i.pick % 3 === 0) h.advance(i.advance);
      else {
        h.now += i.advance;
        pick(tree)!.send({ type: 'tick' });
      }
      return;
    }
    case 'requeue': {
      const parked = tree.filter((x) => x.status === 'dlq');
      pick(parked)?.requeue();
      return;
    }
    case 'cancel':
    case 'abort': {
      const x = i.pick % 3 === 0 ? pick(tree)! : h;
      // An abort in the middle of a revert is an operator overriding the parent: left out here.
      if (i.kind === 'abort') {
        if (x.snapshot.parent?.phase !== 'compensate') x.abort('random');
        return;
      }
      const m = modelOf(x, g.steps.get(x.snapshot.workflow.name)!);
      const refused = pastPivot(m) && !isTerminal(x.status) && x.snapshot.saga?.mode !== 'cancel';
      const before = x.snapshot;
      const effects = h.effects.length;
      let code: string | undefined;
      try {
        x.cancel('random');
      } catch (e) {
        code = (e as { code?: string }).code;
        if (code !== 'PAST_PIVOT') throw e;
      }
      expect({ id: x.id, refused: code === 'PAST_PIVOT' }).toEqual({ id: x.id, refused });
      if (refused) {
        expect(x.snapshot).toBe(before);
        expect(h.effects).toHaveLength(effects);
      }
    }
  }
}

/** A stable small hash of a string, for the faults the drain injects. */
function hash(text: string): number {
  let x = 2166136261;
  for (let i = 0; i < text.length; i++) x = Math.imul(x ^ text.charCodeAt(i), 16777619);
  return x >>> 0;
}

/**
 * Finishes the tree: effects, then results, requeues, timers; every instance must end. Until the
 * first requeue, one unit in `faults` fails every attempt (so rollbacks reach deep into the tree);
 * after it, every handler succeeds.
 */
function drain(h: Tree, faults: number): void {
  let faulty = faults > 0;
  const requeued = new Set<string>();
  for (let n = 0; n < 20_000; n++) {
    if (h.perform(0)) continue;
    const one = handlerTasks(h)[0];
    if (one) {
      const unit = `${one.x.id}:${unitOf(one.t.step, one.t.item)}`;
      const ok = !faulty || one.t.phase === 'compensate' || hash(unit) % faults !== 0;
      const { at: _, ...e } = result(one.t, ok, false);
      one.x.send(e as never);
      continue;
    }
    const parked = h.tree.find((x) => x.status === 'dlq');
    if (parked) {
      faulty = false;
      // A workflow map past its tolerance parks again when requeued (its failed children are
      // final): an operator then cancels the instance, or aborts it past a pivot.
      if (requeued.has(parked.id)) {
        try {
          parked.cancel('parked again');
        } catch (e) {
          if ((e as { code?: string }).code !== 'PAST_PIVOT') throw e;
          parked.abort('parked again');
        }
        requeued.delete(parked.id);
        continue;
      }
      requeued.add(parked.id);
      parked.requeue();
      continue;
    }
    if (!h.advanceToWake()) break;
  }
  const open = h.tree.filter((x) => !isTerminal(x.status));
  expect(
    open.map((x) => ({
      id: x.id,
      status: x.status,
      tasks: Object.keys(x.snapshot.tasks),
      wake: x.snapshot.wakeAt,
    })),
  ).toEqual([]);
}

/** The oracles on one ended instance, given every instance's model. */
function checkInstance(
  m: InstanceModel,
  steps: Map<string, StepInfo>,
  models: Map<string, InstanceModel>,
  onFailure: string,
) {
  const s = m.final;
  expect(s.tasks).toEqual({});
  expect(s.timers).toEqual([]);
  expect(s.wakeAt).toBeNull();
  for (const [key, n] of m.ends)
    expect({ id: m.id, end: key, applied: n }).toEqual({ id: m.id, end: key, applied: 1 });
  if (m.reverts) {
    expect({ id: m.id, reverts: m.reverts, status: s.status }).toEqual({
      id: m.id,
      reverts: 1,
      status: 'cancelled',
    });
  }
  expect(new Set(m.done).size, `${m.id}: a unit completed twice`).toBe(m.done.length);
  const compensable = (unit: string) => {
    const info = steps.get(unit.replace(/\[\d+\]$/, ''))!;
    return (
      info.kind === 'child' ||
      info.kind === 'wmap' ||
      ((info.kind === 'task' || info.kind === 'hmap') && info.comp)
    );
  };
  const childOf = (unit: string) => models.get(m.childOf.get(unit) ?? '');
  if (s.status === 'completed') {
    expect({ id: m.id, undone: [...m.undone] }).toEqual({ id: m.id, undone: [] });
    for (const [id, info] of steps) completedStep(m, id, info, models);
    return;
  }
  if (s.status === 'aborted') return;
  let rolledBack = true;
  if (s.status === 'failed') {
    const failed = s.error?.step;
    expect(failed, `${m.id}: a failure names its step`).toBeDefined();
    const info = steps.get(failed!)!;
    const policy = (info.kind === 'task' ? info.onFailure : undefined) ?? onFailure;
    expect(policy).not.toBe('dlq');
    rolledBack = policy === 'compensate';
  }
  for (const unit of m.done) {
    const n = m.undone.get(unit) ?? 0;
    const want = rolledBack && compensable(unit) ? 1 : 0;
    if (want && m.stopped) expect(n).toBeLessThanOrEqual(1);
    else expect({ id: m.id, unit, compensations: n }).toEqual({ id: m.id, unit, compensations: want });
    // A child undone by a revert was reverted once and ended cancelled; one with its step's own
    // handler, or not undone, was never reverted.
    const child = childOf(unit);
    if (!child) continue;
    const info = steps.get(unit.replace(/\[\d+\]$/, ''))!;
    const own = (info.kind === 'child' || info.kind === 'wmap') && info.own;
    expect({ child: child.id, reverts: child.reverts }).toEqual({
      child: child.id,
      reverts: n && !own ? 1 : 0,
    });
  }
  for (const unit of m.undone.keys()) expect(m.done, `${m.id}: ${unit} undone, never done`).toContain(unit);
}

/** A completed instance's step: completed, its map items done or tolerated, its children completed. */
function completedStep(m: InstanceModel, id: string, info: StepInfo, models: Map<string, InstanceModel>) {
  const st = m.final.steps[id];
  // A gate's pivot task is on the path of a workflow map's first item only.
  const taken = info.kind !== 'gated' || (m.final.input as { i?: number } | null)?.i === 0;
  const status = taken ? 'completed' : undefined;
  expect({ id: m.id, step: id, status: st?.status }).toEqual({ id: m.id, step: id, status });
  if (info.kind === 'child') {
    const child = models.get(st!.child!.id)!;
    expect(child.final.status).toBe('completed');
    expect(st!.output).toEqual(child.final.output ?? null);
  }
  if (info.kind !== 'hmap' && info.kind !== 'wmap') return;
  const map = st!.map!;
  expect(map.ok + map.failed.length).toBe(info.items);
  // Requeued or not: a workflow map past its tolerance parks again rather than complete.
  expect(map.failed.length).toBeLessThanOrEqual(tolerates(info.tolerated, info.items));
  for (let i = 0; i < info.items; i++) {
    const failed = map.failed.includes(i);
    if (info.kind === 'hmap') expect((st!.output as unknown[])[i]).toEqual(failed ? null : { item: i });
    else if (!failed) expect(models.get(m.childOf.get(unitOf(id, i))!)?.final.status).toBe('completed');
  }
}

const caseArb = fc.record({
  spec: treeArb,
  compFailures: fc.boolean(),
  faults: fc.constantFrom(0, 4, 8, 16),
  intents: fc.array(intentArb, { maxLength: 80 }),
});

/** What the runs covered, printed once: so a change that makes the property vacuous shows. */
const seen = {
  trees: 0,
  instances: 0,
  depth2: 0,
  reverts: 0,
  undone: 0,
  pivots: 0,
  stopped: 0,
  root: {} as Record<string, number>,
};

function tally(h: Tree, models: Map<string, InstanceModel>): void {
  seen.trees++;
  seen.instances += models.size;
  if (h.tree.some((x) => x.parent?.parent)) seen.depth2++;
  for (const m of models.values()) {
    seen.reverts += m.reverts;
    seen.undone += [...m.undone.values()].reduce((a, b) => a + b, 0);
    seen.pivots += m.pivotAt.length;
    if (m.stopped) seen.stopped++;
  }
  seen.root[h.status] = (seen.root[h.status] ?? 0) + 1;
}

describe('saga oracles across random trees of child workflows and maps', () => {
  it(
    'terminal is final (but for a revert), completed ⇒ path done, rolled back ⇒ each unit undone once, pivots hold, each end applied once, replay',
    () => {
      fc.assert(
        fc.property(caseArb, ({ spec, compFailures, faults, intents }) => {
          const g = compileTree(spec);
          const h = createHarness(g.root, {
            kinds: [composition],
            workflows: g.children,
            id: 'r',
            effects: 'manual',
            now: 1000,
          });
          h.start(g.input);
          const history: ChildEffect[] = [];
          for (const i of intents) act(h, i, g, compFailures, history);
          drain(h, faults);
          const models = new Map<string, InstanceModel>();
          for (const x of h.tree) models.set(x.id, modelOf(x, g.steps.get(x.snapshot.workflow.name)!));
          const policies = new Map([[g.root.name, spec.root.onFailure]]);
          spec.mids.forEach((w, k) => policies.set(`mid${k}`, w.onFailure));
          spec.leaves.forEach((w, k) => policies.set(`leaf${k}`, w.onFailure));
          for (const m of models.values()) {
            const name = m.final.workflow.name;
            checkInstance(m, g.steps.get(name)!, models, policies.get(name)!);
          }
          tally(h, models);
        }),
        { numRuns: RUNS, seed: SEED },
      );
      console.log(`trees: ${JSON.stringify(seen)}`);
    },
    Math.max(120_000, RUNS * 200),
  );
});
