import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { defineWorkflow, ValidationError, type WorkflowDefinition } from '@stepfold/engine';
import { parseAllDocuments } from 'yaml';
import { loadDefinitionModule } from './definition-module.js';
import { UsageError } from './exit-codes.js';
import { MODULE_EXTENSIONS, parseModuleSpec, TYPESCRIPT_EXTENSIONS } from './modules.js';

// Data files: what a directory given to --definitions is scanned for. Modules are named one by one
// (a directory of definitions often holds the handlers module too, which must not be imported as one).
const EXTENSIONS = new Set(['.json', '.yaml', '.yml']);

/** Reads a file the user named; a missing or unreadable one is a usage error (exit 2). */
export function readUserFile(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${what} ${path}: ${(e as Error).message}`);
  }
}

/** The documents of a JSON or YAML file (a YAML file may hold several, separated by `---`). */
export function parseDataFile(path: string, text: string): unknown[] {
  const ext = extname(path).toLowerCase();
  if (ext === '.json') return [JSON.parse(text)];
  const docs = parseAllDocuments(text);
  // parseAllDocuments returns an EmptyStream for an empty file: no documents.
  if (!Array.isArray(docs)) return [];
  return docs.map((doc) => {
    const error = doc.errors[0];
    if (error) throw new Error(error.message);
    return doc.toJS();
  });
}

/**
 * The workflow definitions in one JSON or YAML file: a definition, an array of them, or (YAML)
 * one per document; each validated by `defineWorkflow` (INVALID_DEFINITION lists every problem).
 */
export function loadDefinitionFile(path: string): WorkflowDefinition[] {
  const ext = extname(path).toLowerCase();
  if (!EXTENSIONS.has(ext)) throw new UsageError(`${path}: a definition file must be .json, .yaml or .yml`);
  const text = readUserFile(path, 'definition');
  let docs: unknown[];
  try {
    docs = parseDataFile(path, text);
  } catch (e) {
    throw new ValidationError('INVALID_DEFINITION', `${path} is not valid ${ext.slice(1).toUpperCase()}`, [
      { path: '', message: (e as Error).message },
    ]);
  }
  const inputs = docs.flatMap((d) => (Array.isArray(d) ? d : [d]));
  if (!inputs.length) throw new ValidationError('INVALID_DEFINITION', `${path} holds no definition`, []);
  return inputs.map((input) => {
    try {
      return defineWorkflow(input as Parameters<typeof defineWorkflow>[0]);
    } catch (e) {
      if (e instanceof Error) e.message = `${path}: ${e.message}`;
      throw e;
    }
  });
}

/**
 * The definitions in one file the user named: an ESM module (.js, .mjs) exporting built workflows
 * (`file.js#name`: only the export `name`), or a JSON/YAML file. A TypeScript module is a usage
 * error (compile it first). Every command that takes definitions reads them through here.
 */
export async function loadDefinitionSource(spec: string): Promise<WorkflowDefinition[]> {
  const { path, exportName } = parseModuleSpec(spec);
  const ext = extname(path).toLowerCase();
  if (MODULE_EXTENSIONS.has(ext) || TYPESCRIPT_EXTENSIONS.has(ext))
    return loadDefinitionModule(path, exportName);
  if (exportName !== undefined) {
    throw new UsageError(
      `${spec}: #${exportName} names an export of an ESM module (.js, .mjs); ${path} is not one`,
    );
  }
  if (!EXTENSIONS.has(ext)) {
    throw new UsageError(`${path}: a definition must be .json, .yaml, .yml, or an ESM module (.js, .mjs)`);
  }
  return loadDefinitionFile(path);
}

/** Exactly one definition (for `run`, `replay`, `diagram`): a file of one, or a module's `file.js#name`. */
export async function loadDefinition(spec: string): Promise<WorkflowDefinition> {
  const defs = await loadDefinitionSource(spec);
  if (defs.length === 1) return defs[0]!;
  const { path, exportName } = parseModuleSpec(spec);
  const names = defs.map((d) => `${d.name} v${d.version}`).join(', ');
  const module = MODULE_EXTENSIONS.has(extname(path).toLowerCase()) && exportName === undefined;
  throw new UsageError(
    `${spec} holds ${defs.length} definitions (${names}); ${module ? `pick one with ${path}#<export>` : 'name a file with one'}`,
  );
}

/**
 * Every definition under the given paths: a JSON/YAML file, an ESM module of built workflows, or a
 * directory whose `.json`/`.yaml`/`.yml` files (not its subdirectories nor modules) are all definitions.
 */
export async function loadDefinitions(paths: readonly string[]): Promise<WorkflowDefinition[]> {
  const files: string[] = [];
  for (const spec of paths) {
    const { path, exportName } = parseModuleSpec(spec);
    // Refused as TypeScript, whether or not the file exists (the fix is the same: compile it).
    if (TYPESCRIPT_EXTENSIONS.has(extname(path).toLowerCase())) {
      files.push(spec);
      continue;
    }
    let isDir: boolean;
    try {
      isDir = statSync(path).isDirectory();
    } catch (e) {
      throw new UsageError(`cannot read definitions ${path}: ${(e as Error).message}`);
    }
    if (!isDir || exportName !== undefined) files.push(spec);
    else {
      const names = readdirSync(path).filter((n) => EXTENSIONS.has(extname(n).toLowerCase()));
      files.push(...names.sort().map((n) => join(path, n)));
    }
  }
  if (!files.length) throw new UsageError(`no .json, .yaml or .yml definitions in ${paths.join(', ')}`);
  const defs: WorkflowDefinition[] = [];
  for (const file of files) defs.push(...(await loadDefinitionSource(file)));
  return defs;
}

/** The definition a snapshot was started from, by workflow name and version. */
export function definitionFor(
  defs: readonly WorkflowDefinition[],
  workflow: { name: string; version: number },
): WorkflowDefinition | undefined {
  return defs.find((d) => d.name === workflow.name && d.version === workflow.version);
}
