import {
  type AnyDefinition,
  type DefinitionInput,
  defineWorkflow,
  type Handler,
  type Snapshot,
  type StepDefinition,
  type WorkflowDefinition,
} from '@stepfold/engine';

/** The inspector's view of the workflows it was given: normal-form definitions, looked up by snapshot. */
export interface Definitions {
  readonly all: readonly WorkflowDefinition[];
  /** Workflow names, sorted, for the list filter. */
  readonly names: readonly string[];
  /** The definition an instance was started from (name and version), if the inspector has it. */
  of(snapshot: Pick<Snapshot, 'workflow'>): WorkflowDefinition | undefined;
}

/** Validates each definition once (typed builder output or JSON) and indexes it by name and version. */
export function indexDefinitions(workflows: readonly AnyDefinition[]): Definitions {
  const all = workflows.map((w) => defineWorkflow(w as DefinitionInput));
  const byKey = new Map(all.map((d) => [`${d.name}@${d.version}`, d]));
  return {
    all,
    names: [...new Set(all.map((d) => d.name))].sort(),
    of: (s) => byKey.get(`${s.workflow.name}@${s.workflow.version}`),
  };
}

/**
 * Stub handlers for every handler name the definitions use: a runner insists on one per name, and
 * the inspector's runner (`execute: false`) never calls them — the tasks go to the user's workers.
 */
export function stubHandlers(defs: readonly WorkflowDefinition[]): Record<string, Handler> {
  const stubs: Record<string, Handler> = {};
  const stub: Handler = () => {
    throw new Error('@stepfold/inspector only hands tasks off; its runner never runs a handler');
  };
  for (const def of defs) {
    for (const s of Object.values(def.steps)) {
      if (s.kind !== 'task') continue;
      stubs[s.handler] = stub;
      if (s.compensate !== undefined) stubs[s.compensate] = stub;
    }
  }
  return stubs;
}

/** A human step waiting for a decision, with the signal name the decision goes to. */
export interface PendingDecision {
  step: string;
  signal: string;
}

/** The human steps of the instance that are active now (each takes an approve/reject form). */
export function pendingDecisions(def: WorkflowDefinition | undefined, s: Snapshot): PendingDecision[] {
  if (!def) return [];
  return s.active.flatMap((id) => {
    const step = Object.hasOwn(def.steps, id) ? def.steps[id] : undefined;
    return step?.kind === 'human' ? [{ step: id, signal: step.signal ?? id }] : [];
  });
}

/** Every signal name the definition's steps listen for (a hint list for the signal form). */
export function signalNames(def: WorkflowDefinition | undefined): string[] {
  if (!def) return [];
  const names = new Set<string>();
  for (const s of Object.values(def.steps) as (StepDefinition & { id: string })[]) {
    if (s.kind === 'wait' || s.kind === 'collect') names.add(s.signal);
    else if (s.kind === 'human') names.add(s.signal ?? s.id);
  }
  return [...names].sort();
}
