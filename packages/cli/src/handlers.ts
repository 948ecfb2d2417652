import { existsSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Handler } from '@stepfold/engine';
import { UsageError } from './exit-codes.js';

const TYPESCRIPT = new Set(['.ts', '.mts', '.cts', '.tsx']);

/**
 * Imports a handlers module (.js or .mjs, ESM) and returns its handlers: the functions of its
 * default export when that is an object, else its named function exports. TypeScript modules are
 * refused: compile them first (Node 20 cannot import .ts without a loader).
 */
export async function loadHandlers(path: string): Promise<Record<string, Handler>> {
  const ext = extname(path).toLowerCase();
  if (TYPESCRIPT.has(ext)) {
    throw new UsageError(
      `${path}: handlers in TypeScript are not supported; compile the module to .js or .mjs (e.g. with tsc) and pass that`,
    );
  }
  const file = resolve(path);
  if (!existsSync(file)) throw new UsageError(`cannot read handlers ${path}: no such file`);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (e) {
    throw new UsageError(`cannot import handlers ${path}: ${(e as Error).message}`);
  }
  const fromDefault = mod['default'];
  const source =
    typeof fromDefault === 'object' && fromDefault !== null
      ? (fromDefault as Record<string, unknown>)
      : Object.fromEntries(Object.entries(mod).filter(([name]) => name !== 'default'));
  const handlers: Record<string, Handler> = {};
  for (const [name, value] of Object.entries(source)) {
    if (typeof value === 'function') handlers[name] = value as Handler;
  }
  if (!Object.keys(handlers).length) {
    throw new UsageError(`${path} exports no handler functions (a default object of them, or named exports)`);
  }
  return handlers;
}
