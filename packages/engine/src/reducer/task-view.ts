import { compileWorkflow } from '../definition/compile.js';
import { mapData, readPath } from '../definition/data-path.js';
import type { DefinitionInput, WorkflowDefinition } from '../definition/schema.js';
import type { Snapshot, TaskState } from '../snapshot.js';
import { dataView } from './transition-context.js';

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
  // Outputs are gathered only if asked for: most handlers never look at them.
  let data: ReturnType<typeof dataView> | undefined;
  return {
    input: taskInput(definition, snapshot, task),
    get outputs() {
      data ??= dataView(snapshot);
      return data.outputs;
    },
    iteration: snapshot.steps[task.step]?.iteration ?? 1,
  };
}

/** The input a handler sees for a dispatched task: the step's mapped input, or the workflow input when it maps none. */
export function taskInput(
  definition: DefinitionInput | WorkflowDefinition,
  snapshot: Snapshot,
  task: TaskState,
): unknown {
  const def = compileWorkflow(definition).definition.steps[task.step] as { input?: unknown; kind: string };
  const mapping = def.input as Parameters<typeof mapData>[1] | undefined;
  if (task.item !== undefined && def.kind === 'map') {
    // A map item reads its item and index beside the workflow's data (the item by default).
    const view = dataView(snapshot);
    const items = readPath(view, (def as unknown as { items: string }).items);
    const item = Array.isArray(items) ? items[task.item] : undefined;
    return mapping === undefined ? item : mapData({ ...view, item, index: task.item }, mapping);
  }
  return mapping === undefined ? snapshot.input : mapData(dataView(snapshot), mapping);
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
