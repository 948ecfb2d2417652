import type { Handler } from '@stepfold/engine';
import { UsageError } from './exit-codes.js';
import { importUserModule } from './modules.js';

/**
 * Imports a handlers module (.js or .mjs, ESM) and returns its handlers: the functions of its
 * default export when that is an object, else its named function exports. TypeScript modules are
 * refused: compile them first (Node 20 cannot import .ts without a loader).
 */
export async function loadHandlers(path: string): Promise<Record<string, Handler>> {
  const mod = await importUserModule(path, 'handlers');
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
