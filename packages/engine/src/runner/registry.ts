import { compileWorkflow } from '../definition/compile.js';
import { kindOf } from '../definition/kinds/index.js';
import type { DefinitionInput, WorkflowDefinition } from '../definition/schema.js';
import { RegistryError } from '../errors.js';
import { kindTable } from '../reducer/kind-sets.js';
import { assertKinds, type KindSet } from '../reducer/kind-table.js';
import { hashMismatch } from '../reducer/snapshot-check.js';
import type { Snapshot } from '../snapshot.js';

/** Registered definitions by name and version, with their handlers checked. */
export interface WorkflowRegistry {
  /** The given version, or the newest when omitted. */
  resolve(name: string, version?: number): WorkflowDefinition;
  /** The definition a snapshot pinned; refuses a changed definition under the same version. */
  forSnapshot(snapshot: Snapshot): WorkflowDefinition;
  /** Every registered workflow name. */
  names(): string[];
  /** Every registered definition, each version of each workflow. */
  all(): WorkflowDefinition[];
  /** The kind sets the definitions were checked against: every reduction of this runner passes them. */
  readonly kinds: readonly KindSet[] | undefined;
}

/**
 * A kind set's check of the definitions a runner registers, together (by name, then version);
 * throws what `createRunner` throws (see `RunnerKindSet.checkRegistered`).
 */
export type RegisteredCheck = (byName: ReadonlyMap<string, ReadonlyMap<number, WorkflowDefinition>>) => void;

/** What a registry is made of. */
export interface RegistryOptions {
  workflows: ReadonlyArray<DefinitionInput | WorkflowDefinition>;
  /** The handlers the runner has; undefined for a runner that runs none (nothing is checked). */
  handlerNames?: ReadonlySet<string> | undefined;
  /** Step kinds beyond the core (`[composition]`): every kind a definition uses must be here. */
  kinds?: readonly KindSet[] | undefined;
  /** Refuse handlers no definition names (`strictHandlers`). */
  strict?: boolean | undefined;
}

/**
 * Validates definitions and checks that every handler and compensation they name exists (unless
 * `handlerNames` is undefined: a runner that runs none) and that `kinds` has every step kind they
 * use. Throws `UNKNOWN_HANDLER` listing all missing handlers (and with `strict` every handler given
 * that no definition names), `KIND_NOT_LOADED` naming the option.
 */
export function createRegistry({
  workflows,
  handlerNames,
  kinds,
  strict,
}: RegistryOptions): WorkflowRegistry {
  const table = kindTable(kinds);
  const byName = new Map<string, Map<number, WorkflowDefinition>>();
  const missing: string[] = [];
  const named = new Set<string>();
  for (const input of workflows) {
    const wf = compileWorkflow(input);
    // A child or map step needs its kind's rules: a clear error now, not at the step.
    assertKinds(wf, table);
    const def = wf.definition;
    for (const s of Object.values(def.steps)) {
      for (const h of kindOf(s).handlers?.(s) ?? []) {
        named.add(h);
        if (handlerNames && !handlerNames.has(h))
          missing.push(`${def.name} v${def.version} step ${s.id}: ${h}`);
      }
    }
    const versions = byName.get(def.name) ?? new Map<number, WorkflowDefinition>();
    const prior = versions.get(def.version);
    if (prior && compileWorkflow(prior).hash !== compileWorkflow(def).hash) {
      throw new RegistryError(
        'DEFINITION_HASH_MISMATCH',
        `${def.name} v${def.version} registered twice with different content`,
      );
    }
    versions.set(def.version, def);
    byName.set(def.name, versions);
  }
  // Checks of the definitions together, by the kind sets that need them (child workflows registered).
  if (kinds)
    for (const k of kinds as readonly { checkRegistered?: RegisteredCheck | undefined }[])
      k.checkRegistered?.(byName);
  if (missing.length)
    throw new RegistryError('UNKNOWN_HANDLER', `handlers not registered:\n  - ${missing.join('\n  - ')}`);
  const extra = strict && handlerNames ? [...handlerNames].filter((h) => !named.has(h)) : [];
  if (extra.length)
    throw new RegistryError(
      'UNKNOWN_HANDLER',
      `strictHandlers: handlers no workflow names:\n  - ${extra.join('\n  - ')}`,
    );

  const resolve = (name: string, version?: number): WorkflowDefinition => {
    const versions = byName.get(name);
    if (!versions)
      throw new RegistryError('UNKNOWN_WORKFLOW', `workflow ${JSON.stringify(name)} is not registered`);
    const v = version ?? Math.max(...versions.keys());
    const def = versions.get(v);
    if (!def) throw new RegistryError('UNKNOWN_VERSION', `workflow ${name} has no version ${v} registered`);
    return def;
  };
  return {
    kinds,
    resolve,
    names: () => [...byName.keys()],
    all: () => [...byName.values()].flatMap((v) => [...v.values()]),
    forSnapshot(snapshot) {
      const def = resolve(snapshot.workflow.name, snapshot.workflow.version);
      const hash = compileWorkflow(def).hash;
      if (hash !== snapshot.workflow.hash) throw hashMismatch(snapshot, def, hash);
      return def;
    },
  };
}
