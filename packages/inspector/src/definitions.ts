import {
  type AnyDefinition,
  type DeclaredSignal,
  type DefinitionInput,
  declaredSchemas,
  declaredSignals,
  defineWorkflow,
  type Snapshot,
  type WorkflowDefinition,
} from '@stepfold/engine';

/** One definition as the inspector keeps it: the normal form, and the object the host passed. */
export interface IndexedDefinition {
  /** The validated normal form (what `toMermaid`, `cancelRefusal`… take). */
  readonly def: WorkflowDefinition;
  /**
   * The object the host passed. A typed builder's schemas are kept in a WeakMap keyed by the very
   * object `build()` returned, so this is what the runner must get for them to be checked.
   */
  readonly original: AnyDefinition;
  /** Its signals, each with the schema the builder declared (looked up on either object). */
  readonly signals: readonly DeclaredSignal[];
}

/** The inspector's view of the workflows it was given, looked up by snapshot. */
export interface Definitions {
  /** What the runner is created with: the host's own objects, so declared schemas stay attached. */
  readonly originals: readonly AnyDefinition[];
  /** Workflow names, sorted, for the list filter. */
  readonly names: readonly string[];
  /** The definition an instance was started from (name and version), if the inspector has it. */
  of(snapshot: Pick<Snapshot, 'workflow'>): IndexedDefinition | undefined;
}

/** Validates each definition once (typed builder output or JSON) and indexes it by name and version. */
export function indexDefinitions(workflows: readonly AnyDefinition[]): Definitions {
  const indexed = workflows.map((original): IndexedDefinition => {
    const def = defineWorkflow(original as DefinitionInput);
    const schemas = declaredSchemas(original) ?? declaredSchemas(def);
    const signals = declaredSignals(def).map((s) => {
      const schema =
        s.schema ?? (Object.hasOwn(schemas?.signals ?? {}, s.name) ? schemas?.signals[s.name] : undefined);
      return schema === undefined ? s : { ...s, schema };
    });
    return { def, original, signals };
  });
  const byKey = new Map(indexed.map((d) => [`${d.def.name}@${d.def.version}`, d]));
  return {
    originals: workflows,
    names: [...new Set(indexed.map((d) => d.def.name))].sort(),
    of: (s) => byKey.get(`${s.workflow.name}@${s.workflow.version}`),
  };
}
