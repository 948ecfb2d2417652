import { compileWorkflow } from '../definition/compile.js';
import { mapData, readPath } from '../definition/data-path.js';
import type { DefinitionInput, WorkflowDefinition } from '../definition/schema.js';
import type { Snapshot, TaskState } from '../snapshot.js';
import { dataView, taskDef } from './transition-context.js';

/** What a handler is given, computed from the snapshot version that dispatched the task. */
export interface TaskView {
  /** The step's mapped input, or the workflow input when the step maps none. */
  input: unknown;
  /** Outputs of completed steps, by step id. */
  outputs: Record<string, unknown>;
  /** How many times the step has been entered in this run (1 the first time; loops count up). */
  iteration: number;
}

/** The input and outputs a handler sees for a dispatched task. */
export function taskView(
  definition: DefinitionInput | WorkflowDefinition,
  snapshot: Snapshot,
  task: TaskState,
): TaskView {
  const wf = compileWorkflow(definition);
  // Outputs are gathered only if asked for: most handlers never look at them.
  let data: ReturnType<typeof dataView> | undefined;
  const view = () => {
    data ??= dataView(snapshot);
    return data;
  };
  const def = taskDef({ wf, s: snapshot, at: 0, budget: 0 }, task.step);
  const mapping = def.input;
  let input: unknown;
  if (task.item !== undefined && (def as { kind: string }).kind === 'map') {
    // A map item reads its item and index beside the workflow's data (the item by default).
    const items = readPath(view(), (def as unknown as { items: string }).items);
    const item = Array.isArray(items) ? items[task.item] : undefined;
    const root = { ...view(), item, index: task.item };
    input = mapping === undefined ? item : mapData(root, mapping);
  } else input = mapping === undefined ? snapshot.input : mapData(view(), mapping);
  return {
    input,
    get outputs() {
      return view().outputs;
    },
    iteration: snapshot.steps[task.step]?.iteration ?? 1,
  };
}

/**
 * Tasks that the write of this snapshot handed out: the writer runs exactly these. A write may
 * cover several versions (a start and the signal that came with it): pass the version the store
 * held before it, `since`, to get the tasks of all of them.
 */
export function dispatchedBy(snapshot: Snapshot, since = snapshot.version - 1): TaskState[] {
  // A loop, not Object.values(...).filter: this runs after every write.
  const out: TaskState[] = [];
  for (const key in snapshot.tasks) {
    const t = snapshot.tasks[key]!;
    if (t.dispatchVersion > since) out.push(t);
  }
  return out;
}
