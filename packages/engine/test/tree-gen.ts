import { defineWorkflow, type StepDefinition, type WorkflowDefinition } from '@stepfold/engine';
import fc from 'fast-check';

// Random trees of workflows for the tree property test: a root, middle workflows and leaves, each
// a sequence of tasks, handler maps, child steps and workflow maps (a root's and a middle
// workflow's composite steps start the level below, so every tree nests at least two deep), with
// random pivots, retries, tolerances and failure policies.

export type Tolerance = { count?: number; percent?: number } | undefined;
export type StepSpec =
  | { kind: 'task'; comp: boolean; pivot: boolean; attempts: number; onFailure?: 'fail' | 'dlq' | undefined }
  | {
      kind: 'hmap';
      items: number;
      conc: number;
      tolerated: Tolerance;
      comp: boolean;
      attempts: number;
      pivot: boolean;
    }
  | { kind: 'child'; to: number; own: boolean; pivot: boolean }
  | {
      kind: 'wmap';
      to: number;
      items: number;
      conc: number;
      tolerated: Tolerance;
      own: boolean;
      pivot: boolean;
    }
  /** A choice: the first item of a workflow map (`input.i` is 0) passes a pivot task here, the others do not. */
  | { kind: 'gate'; pivot?: undefined }
  /** The pivot task behind a gate, and the succeed step a gate at the end leads to (compiled, never generated). */
  | { kind: 'gated'; pivot: true }
  | { kind: 'end'; pivot?: undefined };
export type WorkflowSpec = { steps: StepSpec[]; onFailure: 'compensate' | 'fail' };
export type TreeSpec = { root: WorkflowSpec; mids: WorkflowSpec[]; leaves: WorkflowSpec[] };

const rarely = fc.constantFrom(false, false, false, false, false, false, false, true);
const pivotOdds = fc.constantFrom(
  false,
  false,
  false,
  false,
  false,
  false,
  false,
  false,
  false,
  false,
  false,
  true,
);
const tolerance: fc.Arbitrary<Tolerance> = fc.oneof(
  fc.constant(undefined),
  fc.record({ count: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ percent: fc.constantFrom(0, 25, 50) }),
);
const task: fc.Arbitrary<StepSpec> = fc.record({
  kind: fc.constant('task' as const),
  comp: fc.boolean(),
  pivot: pivotOdds,
  attempts: fc.integer({ min: 1, max: 3 }),
  onFailure: fc.constantFrom(
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
    'fail' as const,
    'dlq' as const,
  ),
});
const hmap: fc.Arbitrary<StepSpec> = fc.record({
  kind: fc.constant('hmap' as const),
  items: fc.integer({ min: 0, max: 5 }),
  conc: fc.integer({ min: 1, max: 3 }),
  tolerated: tolerance,
  comp: fc.boolean(),
  attempts: fc.integer({ min: 1, max: 2 }),
  pivot: pivotOdds,
});
const composite: fc.Arbitrary<StepSpec> = fc.oneof(
  fc.record({ kind: fc.constant('child' as const), to: fc.nat(), own: rarely, pivot: pivotOdds }),
  fc.record({
    kind: fc.constant('wmap' as const),
    to: fc.nat(),
    items: fc.constantFrom(0, 1, 2, 2, 3, 3),
    conc: fc.integer({ min: 1, max: 3 }),
    tolerated: tolerance,
    own: rarely,
    pivot: pivotOdds,
  }),
);
const policy = fc.constantFrom(
  'compensate' as const,
  'compensate' as const,
  'compensate' as const,
  'fail' as const,
);

const gate: fc.Arbitrary<StepSpec> = fc.constant({ kind: 'gate' as const });

/** A leaf: tasks, handler maps and gates only. */
const leaf: fc.Arbitrary<WorkflowSpec> = fc.record({
  steps: fc.array(
    fc.oneof({ weight: 6, arbitrary: task }, { weight: 2, arbitrary: hmap }, { weight: 1, arbitrary: gate }),
    {
      minLength: 1,
      maxLength: 3,
    },
  ),
  onFailure: policy,
});

/** A workflow with at least one step that starts a workflow of the level below. */
const upper: fc.Arbitrary<WorkflowSpec> = fc
  .record({
    first: composite,
    rest: fc.array(
      fc.oneof(
        { weight: 6, arbitrary: task },
        { weight: 2, arbitrary: hmap },
        { weight: 2, arbitrary: composite },
        { weight: 1, arbitrary: gate },
      ),
      { maxLength: 3 },
    ),
    at: fc.nat(),
    onFailure: policy,
  })
  .map(({ first, rest, at, onFailure }) => {
    const steps = [...rest];
    steps.splice(at % (rest.length + 1), 0, first);
    return { steps, onFailure };
  });

export const treeArb: fc.Arbitrary<TreeSpec> = fc.record({
  root: upper,
  mids: fc.array(upper, { minLength: 1, maxLength: 2 }),
  leaves: fc.array(leaf, { minLength: 1, maxLength: 2 }),
});

/** What the oracles read about one step of a compiled tree. */
export type StepInfo = StepSpec & { id: string };
/** A compiled tree: its definitions (root first), each one's step facts by id, and the input every instance gets. */
export interface CompiledTree {
  root: WorkflowDefinition;
  children: WorkflowDefinition[];
  steps: Map<string, Map<string, StepInfo>>;
  /** Every instance's input: the item arrays of every map, by `<workflow>_<step>`. */
  input: { n: Record<string, number[]> };
}

export function compileTree(spec: TreeSpec): CompiledTree {
  const steps = new Map<string, Map<string, StepInfo>>();
  const input: CompiledTree['input'] = { n: {} };
  const level = (specs: WorkflowSpec[], prefix: string, below: string[]) =>
    specs.map((w, k) => {
      const name = `${prefix}${k}`;
      const facts = new Map<string, StepInfo>();
      steps.set(name, facts);
      const defs: Record<string, StepDefinition> = {};
      w.steps.forEach((s, i) => {
        const id = `s${i}`;
        facts.set(id, { ...s, id });
        const link = i + 1 < w.steps.length ? { next: `s${i + 1}` } : {};
        if (s.kind === 'gate') {
          const pivot = `${id}p`;
          // A choice needs somewhere to go: a gate at the end leads to a closing succeed step.
          const after = link.next ?? `${id}e`;
          facts.set(pivot, { kind: 'gated', pivot: true, id: pivot });
          defs[id] = {
            kind: 'choice',
            branches: [{ when: { '==': [{ var: 'input.i' }, 0] }, next: pivot }],
            otherwise: after,
          };
          defs[pivot] = { kind: 'task', handler: 'work', pivot: true, timeoutMs: 5000, next: after };
          if (link.next === undefined) {
            defs[after] = { kind: 'succeed' };
            facts.set(after, { kind: 'end', id: after });
          }
          return;
        }
        defs[id] = stepDefinition(s, name, id, below, input);
        Object.assign(defs[id]!, link);
      });
      return defineWorkflow({
        name,
        version: 1,
        start: 's0',
        onFailure: w.onFailure,
        limits: { log: 8 },
        steps: defs,
      });
    });
  const leaves = level(spec.leaves, 'leaf', []);
  const mids = level(
    spec.mids,
    'mid',
    leaves.map((d) => d.name),
  );
  const [root] = level(
    [spec.root],
    'root',
    mids.map((d) => d.name),
  );
  return { root: root!, children: [...mids, ...leaves], steps, input };
}

const retry = (attempts: number) => ({
  maxAttempts: attempts,
  initialMs: 100,
  factor: 2,
  maxMs: 1000,
  jitter: 0.5,
});

function stepDefinition(
  s: StepSpec,
  wf: string,
  id: string,
  below: string[],
  input: CompiledTree['input'],
): StepDefinition {
  const pivot = s.pivot ? { pivot: true } : {};
  const items = () => {
    const key = `${wf}_${id}`;
    input.n[key] = Array.from({ length: (s as { items: number }).items }, (_, i) => i);
    return `input.n.${key}`;
  };
  const tolerated = (t: Tolerance) => (t === undefined ? {} : { tolerated: t });
  switch (s.kind) {
    case 'gate':
    case 'gated':
    case 'end':
      throw new Error('compiled by compileTree');
    case 'task':
      return {
        kind: 'task',
        handler: 'work',
        ...(s.comp ? { compensate: 'undo' } : {}),
        ...pivot,
        ...(s.onFailure ? { onFailure: s.onFailure } : {}),
        retry: retry(s.attempts),
        timeoutMs: 5000,
      };
    case 'hmap':
      return {
        kind: 'map',
        items: items(),
        handler: 'item',
        ...(s.comp ? { compensate: 'unitem' } : {}),
        input: { i: 'index' },
        maxConcurrency: s.conc,
        ...tolerated(s.tolerated),
        retry: retry(s.attempts),
        timeoutMs: 5000,
        ...pivot,
      };
    case 'child':
      return {
        kind: 'child',
        workflow: below[s.to % below.length]!,
        input: 'input',
        timeoutMs: 8000,
        ...(s.own ? { compensate: 'unchild' } : {}),
        ...pivot,
      };
    case 'wmap':
      return {
        kind: 'map',
        items: items(),
        workflow: below[s.to % below.length]!,
        input: { i: 'index', n: 'input.n' },
        maxConcurrency: s.conc,
        ...tolerated(s.tolerated),
        timeoutMs: 8000,
        ...(s.own ? { compensate: 'unchild' } : {}),
        ...pivot,
      };
  }
}

/** What the test does next, to any instance of the tree. */
export type Intent =
  | { kind: 'complete' | 'fail'; pick: number; retryable: boolean }
  | { kind: 'effect' | 'drop' | 'redo'; pick: number }
  | { kind: 'tick'; advance: number; pick: number }
  | { kind: 'cancel' | 'abort' | 'requeue'; pick: number };

export const intentArb: fc.Arbitrary<Intent> = fc.oneof(
  {
    weight: 14,
    arbitrary: fc.record({
      kind: fc.constantFrom('complete' as const, 'complete' as const, 'fail' as const),
      pick: fc.nat(),
      retryable: fc.boolean(),
    }),
  },
  { weight: 10, arbitrary: fc.record({ kind: fc.constant('effect' as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constantFrom('drop' as const, 'redo' as const), pick: fc.nat() }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('tick' as const),
      advance: fc.constantFrom(0, 150, 1200, 6000, 9000),
      pick: fc.nat(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constantFrom('abort' as const, 'requeue' as const), pick: fc.nat() }),
  },
);

/** The tolerated failures of a map spec out of `total` (the engine's rule, restated). */
export function tolerates(t: Tolerance, total: number): number {
  if (!t) return 0;
  return Math.max(t.count ?? 0, t.percent === undefined ? 0 : Math.floor((total * t.percent) / 100));
}
