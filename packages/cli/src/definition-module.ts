import { defineWorkflow, type WorkflowDefinition } from '@stepfold/engine';
import { UsageError } from './exit-codes.js';
import { importUserModule } from './modules.js';

/** What a module exported, and where (for error messages). */
interface Exported {
  where: string;
  value: unknown;
}

function looksLikeDefinition(v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  return typeof o['name'] === 'string' && typeof o['version'] === 'number' && 'steps' in o;
}

/** An export's definitions: one, an array of them, or an object whose values are definitions. */
function fromExport(where: string, value: unknown): Exported[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return value.map((v, i) => ({ where: `${where}[${i}]`, value: v }));
  if (looksLikeDefinition(value)) return [{ where, value }];
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).map(([k, v]) => ({ where: `${where}.${k}`, value: v }));
  }
  return [{ where, value }];
}

/** The definitions of the export `name` (`default` for the default export); a usage error if it holds none. */
function fromNamedExport(path: string, mod: Record<string, unknown>, name: string): Exported[] {
  if (!(name in mod)) {
    const names = Object.keys(mod).join(', ') || 'nothing';
    throw new UsageError(`${path} has no export named ${name} (it exports ${names})`);
  }
  const found = fromExport(name, mod[name]);
  if (!found.length || !found.every((e) => looksLikeDefinition(e.value))) {
    throw new UsageError(
      `${path}#${name} is not a workflow definition (export a built workflow, or an array or object of them)`,
    );
  }
  return found;
}

/**
 * The definition to register for one export. A definition built by `workflow(...).build()` is
 * returned as the very object the module exported: the engine keeps its declared schemas (zod and
 * the like) in a WeakMap keyed by that object, so a copy would run unchecked. A plain object literal
 * is validated into the engine's form (it declared no schemas).
 */
function definitionOf(path: string, { where, value }: Exported): WorkflowDefinition {
  let checked: WorkflowDefinition;
  try {
    checked = defineWorkflow(value as Parameters<typeof defineWorkflow>[0]);
  } catch (e) {
    if (e instanceof Error) e.message = `${path} (${where}): ${e.message}`;
    throw e;
  }
  // The engine hands back a definition it built itself unchanged (its compile cache).
  if (checked === value) return checked;
  // Frozen but unknown to this engine: built by another copy of @stepfold/engine, whose schemas
  // this one cannot see. Refused rather than run with the payload checks silently gone.
  if (Object.isFrozen(value)) {
    throw new UsageError(
      `${path} (${where}): ${checked.name} v${checked.version} was built by another copy of @stepfold/engine than the CLI's, so its declared schemas would not be checked; run the stepfold CLI installed in the same project as the module (npx stepfold / pnpm exec stepfold)`,
    );
  }
  return checked;
}

/**
 * The workflow definitions an ESM module (.js, .mjs) exports: with `exportName` (`file.js#order`),
 * that export's; else its default export (a definition, an array of them, or an object of them) and
 * its named exports that are definitions (others, such as handlers, are ignored). Each is
 * validated; built definitions keep their declared schemas.
 */
export async function loadDefinitionModule(path: string, exportName?: string): Promise<WorkflowDefinition[]> {
  const mod = await importUserModule(path, 'definitions');
  if (exportName !== undefined)
    return fromNamedExport(path, mod, exportName).map((e) => definitionOf(path, e));
  const exported = [
    ...fromExport('default', mod['default']),
    ...Object.entries(mod)
      .filter(([name, v]) => name !== 'default' && looksLikeDefinition(v))
      .map(([name, value]) => ({ where: name, value })),
  ];
  // `export default [order]` beside `export const order` names one definition twice.
  const seen = new Set<unknown>();
  const unique = exported.filter((e) => !seen.has(e.value) && seen.add(e.value));
  if (!unique.length) {
    throw new UsageError(
      `${path} exports no workflow definitions (a default export of one, an array or object of them, or named exports of built workflows)`,
    );
  }
  return unique.map((e) => definitionOf(path, e));
}
