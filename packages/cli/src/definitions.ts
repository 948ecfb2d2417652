import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { defineWorkflow, ValidationError, type WorkflowDefinition } from '@stepfold/engine';
import { parseAllDocuments } from 'yaml';
import { UsageError } from './exit-codes.js';

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
  if (!EXTENSIONS.has(ext)) throw new UsageError(`${path}: a definition must be .json, .yaml or .yml`);
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

/** Exactly one definition (for `run`, `replay`, `diagram`). */
export function loadDefinition(path: string): WorkflowDefinition {
  const defs = loadDefinitionFile(path);
  if (defs.length !== 1)
    throw new UsageError(`${path} holds ${defs.length} definitions; name a file with one`);
  return defs[0]!;
}

/**
 * Every definition under the given paths: a file, or a directory whose `.json`/`.yaml`/`.yml`
 * files (not its subdirectories) are all definitions.
 */
export function loadDefinitions(paths: readonly string[]): WorkflowDefinition[] {
  const files: string[] = [];
  for (const path of paths) {
    let isDir: boolean;
    try {
      isDir = statSync(path).isDirectory();
    } catch (e) {
      throw new UsageError(`cannot read definitions ${path}: ${(e as Error).message}`);
    }
    if (!isDir) files.push(path);
    else {
      const names = readdirSync(path).filter((n) => EXTENSIONS.has(extname(n).toLowerCase()));
      files.push(...names.sort().map((n) => join(path, n)));
    }
  }
  if (!files.length) throw new UsageError(`no .json, .yaml or .yml definitions in ${paths.join(', ')}`);
  return files.flatMap(loadDefinitionFile);
}

/** Every handler name the definitions' task steps use (forward and compensation). */
export function handlerNames(defs: readonly WorkflowDefinition[]): string[] {
  const names = new Set<string>();
  for (const def of defs) {
    for (const s of Object.values(def.steps)) {
      if (s.kind !== 'task') continue;
      names.add(s.handler);
      if (s.compensate !== undefined) names.add(s.compensate);
    }
  }
  return [...names].sort();
}

/** The definition a snapshot was started from, by workflow name and version. */
export function definitionFor(
  defs: readonly WorkflowDefinition[],
  workflow: { name: string; version: number },
): WorkflowDefinition | undefined {
  return defs.find((d) => d.name === workflow.name && d.version === workflow.version);
}
