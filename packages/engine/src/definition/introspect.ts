import { isTerminal, type Snapshot } from '../snapshot.js';
import { compileWorkflow } from './compile.js';
import { declaredSchemas } from './declared-schemas.js';
import { kindOf } from './kinds/index.js';
import { completedPivotOf } from './pivots.js';
import type { StepDefinition, WorkflowDefinition } from './schema.js';
import type { StandardSchema } from './typing.js';

export {
  type ChildRef,
  type ChildStepRef,
  childRefs,
  type MapProgress,
  type MapStepRef,
  mapChildId,
  mapChildPrefix,
  mapProgress,
  mapProgressText,
} from './child-refs.js';

// `@stepfold/engine`: what tools (the CLI, the inspector, an API) read off a definition
// and an instance, answered once here from the kinds' own facts, so no tool re-derives a rule the
// reducer keeps.

type Step = StepDefinition & { id: string };

function stepsOf(def: WorkflowDefinition): Step[] {
  return Object.entries(def.steps).map(([id, s]) => ({ ...s, id }) as Step);
}

/**
 * Every handler name the definition calls (tasks' handlers and compensations), sorted: what a
 * runner that executes must be given.
 *
 * @example
 * handlerNames(order); // ['charge', 'release', 'reserve']
 */
export function handlerNames(def: WorkflowDefinition): string[] {
  const names = new Set<string>();
  for (const s of stepsOf(def)) for (const h of kindOf(s).handlers?.(s) ?? []) names.add(h);
  return [...names].sort();
}

/** A signal a definition listens for: its name, the steps that wait for it, and what it carries. */
export interface DeclaredSignal {
  /** The signal name `signal`/`send` take. */
  name: string;
  /** Steps that listen for it while active, in definition order. */
  steps: string[];
  /** True when a `human` step listens for it: its payload is a decision (`{ decision: 'approve' | 'reject' }`). */
  decision: boolean;
  /** The payload schema a typed builder declared for it (`.signal(name, schema)`), if any. */
  schema?: StandardSchema | undefined;
}

/**
 * Every signal the definition's steps listen for, sorted by name, with the schema the typed builder
 * declared for each (so a form or a CLI can offer the names and check payloads before sending).
 *
 * @example
 * declaredSignals(expense).map((s) => s.name); // ['approve', 'receipt']
 */
export function declaredSignals(def: WorkflowDefinition): DeclaredSignal[] {
  const schemas = declaredSchemas(def)?.signals ?? {};
  const byName = new Map<string, DeclaredSignal>();
  for (const s of stepsOf(def)) {
    const name = kindOf(s).listensFor?.(s);
    if (name === undefined) continue;
    const entry = byName.get(name) ?? { name, steps: [], decision: false };
    entry.steps.push(s.id);
    if (s.kind === 'human') entry.decision = true;
    byName.set(name, entry);
  }
  for (const [name, schema] of Object.entries(schemas)) {
    const entry = byName.get(name) ?? { name, steps: [], decision: false };
    entry.schema = schema;
    byName.set(name, entry);
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The signal a `human` step's decision goes to (its `signal`, else its id), or undefined when
 * `step` is not a human step of the definition.
 */
export function decisionSignal(def: WorkflowDefinition, step: string): string | undefined {
  const s = Object.hasOwn(def.steps, step) ? def.steps[step] : undefined;
  return s?.kind === 'human' ? kindOf(s).listensFor?.({ ...s, id: step }) : undefined;
}

/** A human step an instance waits at, and the signal its decision goes to. */
export interface PendingDecision {
  step: string;
  signal: string;
}

/**
 * The human decisions an instance waits for now: its active `human` steps, in the order they
 * became active. Empty for a finished instance.
 */
export function pendingDecisions(def: WorkflowDefinition, snapshot: Snapshot): PendingDecision[] {
  if (isTerminal(snapshot.status)) return [];
  return snapshot.active.flatMap((step) => {
    const signal = decisionSignal(def, step);
    return signal === undefined ? [] : [{ step, signal }];
  });
}

/**
 * The first pivot step of the definition that has completed in this instance's current run, if
 * any: from then on nothing rolls back, and `cancel` is refused with `PAST_PIVOT`.
 */
export function completedPivot(def: WorkflowDefinition, snapshot: Snapshot): string | undefined {
  // The rule the reducer reads (a child's pivot counts too).
  return completedPivotOf(compileWorkflow(def), snapshot);
}

/** Why an action cannot be taken on an instance now: a stable code and a sentence for people. */
export interface ActionRefusal {
  code: 'TERMINAL' | 'PAST_PIVOT' | 'CANCELLING';
  message: string;
}

/**
 * Whether `cancel` would be accepted for this instance, and if not why: finished, already
 * cancelling, or past a completed pivot (nothing rolls back any more; `abort` still stops it).
 * Tools use it to hide the action and say why; the reducer enforces the same rules.
 *
 * @example
 * const refusal = cancelRefusal(def, snapshot);
 * if (refusal) console.log(`cannot cancel: ${refusal.message}`);
 */
export function cancelRefusal(def: WorkflowDefinition, snapshot: Snapshot): ActionRefusal | undefined {
  if (isTerminal(snapshot.status)) {
    return { code: 'TERMINAL', message: `${snapshot.id} has finished (${snapshot.status})` };
  }
  if (snapshot.saga?.mode === 'cancel') {
    return { code: 'CANCELLING', message: `${snapshot.id} is already being cancelled` };
  }
  const pivot = completedPivot(def, snapshot);
  if (pivot !== undefined) {
    return {
      code: 'PAST_PIVOT',
      message: `${compileWorkflow(def).pivots.includes(pivot) ? 'pivot step' : 'a child of step'} ${pivot} has completed${compileWorkflow(def).pivots.includes(pivot) ? '' : ' past its own pivot'}, so nothing rolls back any more; abort stops the instance without compensation`,
    };
  }
  return undefined;
}
