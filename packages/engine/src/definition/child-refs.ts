import type { MapState, Snapshot, StepStatus } from '../snapshot.js';
import type { WorkflowDefinition } from './schema.js';

// What a parent's snapshot says about its children, read once here for every tool (the diagram,
// the CLI, the inspector): a child step names its child instance, a map step has counts, and a
// map of child workflows keeps its children under one id prefix. Only the parent's snapshot is
// read; loading the children themselves is the caller's (it has the store).

/** Progress of a map step in counts, and the items worth a look (O(`maxConcurrency`) of them). */
export interface MapProgress {
  /** Items in all. */
  total: number;
  /** Items that completed. */
  done: number;
  /** Items that failed for good (tolerated, or the one that failed the step). */
  failed: number;
  /** Items dispatched and not finished (retry backoffs included). */
  running: number;
  /** Items not dispatched yet. */
  pending: number;
  /** The failed items' indexes, ascending. */
  failedItems: number[];
  /** The running items' indexes, ascending. */
  runningItems: number[];
  /** During rollback: completed items still to compensate. */
  undo?: number | undefined;
  /** Completed items a rollback undid (they count in `done` too: they completed, then were reverted). */
  undone?: number | undefined;
}

/** A child step and the child instance it started. */
export interface ChildStepRef {
  kind: 'child';
  /** The step in the parent. */
  step: string;
  /** The step's status in the parent. */
  status: StepStatus;
  /** The child's workflow, when the definition was given. */
  workflow?: string | undefined;
  /** The child instance's id. */
  id: string;
  /** The child completed past one of its pivots. */
  pivot?: true | undefined;
}

/** A map step: its progress and, for a map of child workflows, where its children are. */
export interface MapStepRef {
  kind: 'map';
  /** The step in the parent. */
  step: string;
  /** The step's status in the parent. */
  status: StepStatus;
  /** The items' workflow, when the definition was given and names one. */
  workflow?: string | undefined;
  /**
   * Set for a map of child workflows (known from the definition, or from the snapshot's tasks or
   * output): item `i`'s child instance is `prefix + i` ({@link mapChildId}).
   */
  prefix?: string | undefined;
  progress: MapProgress;
}

/** A step of a parent that has children or items: see {@link childRefs}. */
export type ChildRef = ChildStepRef | MapStepRef;

/** The counts of a map step's state. */
export function mapProgress(map: MapState): MapProgress {
  const out: MapProgress = {
    total: map.total,
    done: map.ok,
    failed: map.failed.length,
    running: map.running.length,
    pending: Math.max(0, map.total - map.next),
    failedItems: [...map.failed].sort((a, b) => a - b),
    runningItems: [...map.running].sort((a, b) => a - b),
  };
  const undo = (map.undo?.length ?? 0) + completedBelow(map, map.undoBelow ?? 0);
  if (undo) out.undo = undo;
  if (map.undone) out.undone = map.undone;
  return out;
}

/** How many items below `below` completed: dispatched, neither running nor failed. */
function completedBelow(map: MapState, below: number): number {
  const end = Math.min(below, map.next);
  const skip = new Set([...map.running, ...map.failed].filter((i) => i < end));
  return end - skip.size;
}

/**
 * A map's progress in a few words, the same in every tool: `37/500 done · 3 failed · 20 running`
 * (the failed and running parts only when not zero); a rollback adds what it undid and what it has
 * left: `2/3 done · 1 failed · 1 undone · 1 to undo`, then `2/3 done · 1 failed · 2 undone`.
 */
export function mapProgressText(p: MapProgress): string {
  const parts = [`${p.done}/${p.total} done`];
  if (p.failed) parts.push(`${p.failed} failed`);
  if (p.running) parts.push(`${p.running} running`);
  if (p.undone) parts.push(`${p.undone} undone`);
  if (p.undo) parts.push(`${p.undo} to undo`);
  return parts.join(' · ');
}

/** The child instance of item `index` of a map whose children are under `prefix`. */
export function mapChildId(prefix: string, index: number): string {
  return `${prefix}${index}`;
}

/**
 * The steps of `snapshot` that have children or items, in definition order when `definition` is
 * given (else in the order the snapshot entered them): each child step with its child instance's
 * id, each map step with its progress and, for a map of child workflows, its children's prefix.
 *
 * @example
 * for (const ref of childRefs(order, snapshot)) {
 *   if (ref.kind === 'child') await store.load(ref.id);
 *   else if (ref.prefix) await store.load(mapChildId(ref.prefix, ref.progress.failedItems[0] ?? 0));
 * }
 */
export function childRefs(definition: WorkflowDefinition | undefined, snapshot: Snapshot): ChildRef[] {
  const known = definition ? Object.keys(definition.steps) : [];
  const ids = [...new Set([...known, ...Object.keys(snapshot.steps)])];
  const out: ChildRef[] = [];
  for (const step of ids) {
    const st = Object.hasOwn(snapshot.steps, step) ? snapshot.steps[step] : undefined;
    if (!st) continue;
    const def = definition && Object.hasOwn(definition.steps, step) ? definition.steps[step] : undefined;
    const workflow = def && (def.kind === 'child' || def.kind === 'map') ? def.workflow : undefined;
    if (st.child) {
      out.push({
        kind: 'child',
        step,
        status: st.status,
        ...(workflow === undefined ? {} : { workflow }),
        id: st.child.id,
        ...(st.child.pivot ? { pivot: true as const } : {}),
      });
    } else if (st.map) {
      const prefix = childPrefix(snapshot, step, workflow);
      out.push({
        kind: 'map',
        step,
        status: st.status,
        ...(workflow === undefined ? {} : { workflow }),
        ...(prefix === undefined ? {} : { prefix }),
        progress: mapProgress(st.map),
      });
    }
  }
  return out;
}

/**
 * The id prefix of the children a map step of `snapshot` starts in its current iteration, by the
 * reducer's rule (`id/run/step/iteration/`), whether or not the step runs workflows: a tool without
 * the definition can load `prefix + 0` and check its `parent` to tell.
 */
export function mapChildPrefix(snapshot: Snapshot, step: string): string {
  const iteration = Object.hasOwn(snapshot.steps, step) ? (snapshot.steps[step]?.iteration ?? 1) : 1;
  return `${snapshot.id}/${snapshot.run}/${step}/${iteration}/`;
}

/**
 * Where a map's children are: its output says so once it completed; a child's task says so while
 * one runs (its id is the prefix plus the item); else the reducer's rule, when the definition says
 * the map runs workflows.
 */
function childPrefix(s: Snapshot, step: string, workflow: string | undefined): string | undefined {
  const output = s.steps[step]?.output as { children?: unknown } | undefined;
  if (typeof output?.children === 'string') return output.children;
  for (const t of Object.values(s.tasks)) {
    if (t.step !== step || t.child === undefined || t.item === undefined) continue;
    const tail = `${t.item}`;
    if (t.child.endsWith(tail)) return t.child.slice(0, -tail.length);
  }
  return workflow === undefined ? undefined : mapChildPrefix(s, step);
}
