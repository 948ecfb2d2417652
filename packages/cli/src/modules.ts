import { existsSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UsageError } from './exit-codes.js';

/** Extensions of TypeScript sources, which Node 20 cannot import without a loader. */
export const TYPESCRIPT_EXTENSIONS: ReadonlySet<string> = new Set(['.ts', '.mts', '.cts', '.tsx']);

/** Extensions of the ESM modules the CLI imports (handlers, definitions). */
export const MODULE_EXTENSIONS: ReadonlySet<string> = new Set(['.js', '.mjs']);

/** A module the user named: `file.js`, or `file.js#name` picking one of its exports. */
export interface ModuleSpec {
  path: string;
  /** The export after `#`, when one is named. */
  exportName?: string | undefined;
}

/**
 * Splits `file.js#name` into the file and the export. Only an identifier after the last `#` names an
 * export, so a `#` inside a directory name stays part of the path.
 */
export function parseModuleSpec(spec: string): ModuleSpec {
  const hash = spec.lastIndexOf('#');
  const name = spec.slice(hash + 1);
  if (hash <= 0 || !/^[A-Za-z_$][\w$]*$/.test(name)) return { path: spec };
  return { path: spec.slice(0, hash), exportName: name };
}

/**
 * Imports a user's ESM module (`what` names it in errors: "handlers", "definitions"). TypeScript,
 * a missing file and a module that throws on import are usage errors (exit 2).
 */
export async function importUserModule(path: string, what: string): Promise<Record<string, unknown>> {
  if (TYPESCRIPT_EXTENSIONS.has(extname(path).toLowerCase())) {
    throw new UsageError(
      `${path}: ${what} in TypeScript are not supported; compile the module to .js or .mjs (e.g. with tsc) and pass that`,
    );
  }
  const file = resolve(path);
  if (!existsSync(file)) throw new UsageError(`cannot read ${what} ${path}: no such file`);
  try {
    return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (e) {
    throw new UsageError(`cannot import ${what} ${path}: ${(e as Error).message}`);
  }
}
