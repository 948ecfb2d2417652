import { defineWorkflow, type WorkflowDefinition } from '@stepfold/engine';

// The composition rows' workflows (map-postgres, child-postgres). The fleet's worker processes
// register them only with BENCH_COMPOSITION=1, with `kinds: [composition]`, so the
// e2e rows' processes run exactly what they ran before.

/** Items a map-postgres parent maps over. */
export const MAP_ITEMS = 10_000;
/** Items in flight in a map-postgres parent. */
export const MAP_CONCURRENCY = 50;
/** Children per child-postgres parent. */
export const TREE_CHILDREN = 10;

/** One no-op task: the unit of work the map and tree rows compare against. */
export const oneTask: WorkflowDefinition = defineWorkflow({
  name: 'bench-one',
  version: 1,
  start: 'work',
  steps: { work: { kind: 'task', handler: 'noop' } },
});

/** A map step over `input.items` running the no-op handler, results as `results` says. */
function mapOver(name: string, results: 'discard' | 'collect'): WorkflowDefinition {
  return defineWorkflow({
    name,
    version: 1,
    start: 'each',
    steps: {
      each: { kind: 'map', items: 'input.items', handler: 'noop', maxConcurrency: MAP_CONCURRENCY, results },
    },
  });
}

/** map-postgres: results discarded, so the parent keeps only counts and the items in flight. */
export const mapDiscard: WorkflowDefinition = mapOver('bench-map', 'discard');
/** map-postgres-collect: every item's result kept in the step's output (null each, here). */
export const mapCollect: WorkflowDefinition = mapOver('bench-map-collect', 'collect');

const CHILD_STEPS = Array.from({ length: TREE_CHILDREN }, (_, i) => `c${i + 1}`);

/** child-postgres: ten `child` steps in a row, each starting a `bench-one` and waiting for its end. */
export const treeChain: WorkflowDefinition = defineWorkflow({
  name: 'bench-tree',
  version: 1,
  start: CHILD_STEPS[0]!,
  steps: Object.fromEntries(
    CHILD_STEPS.map((id, i) => {
      const next = CHILD_STEPS[i + 1];
      return [id, { kind: 'child', workflow: 'bench-one', ...(next === undefined ? {} : { next }) }];
    }),
  ),
});

/** child-postgres-map: one map step starting a `bench-one` per item of `input.items`, all ten at once. */
export const treeMap: WorkflowDefinition = defineWorkflow({
  name: 'bench-tree-map',
  version: 1,
  start: 'each',
  steps: {
    each: { kind: 'map', items: 'input.items', workflow: 'bench-one', maxConcurrency: TREE_CHILDREN },
  },
});

/** Every workflow of the composition rows. */
export const TREE_WORKFLOWS = [oneTask, mapDiscard, mapCollect, treeChain, treeMap];

/** Workflows whose end the fleet reports across processes (a worker in any of them may write it). */
export const PARENTS = new Set(['bench-map', 'bench-map-collect', 'bench-tree', 'bench-tree-map']);
