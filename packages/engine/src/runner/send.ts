import { compileWorkflow } from '../definition/compile.js';
import { declaredSchemas, schemaIssues } from '../definition/declared-schemas.js';
import type { WorkflowRegistry } from './registry.js';

/**
 * The definitions a sent signal may be applied under, as the `name@version@hash` keys
 * `Store.send` takes: those with a step listening for `name` (or that buffer unknown signals) whose
 * declared payload schema, if any, accepts `payload`. Empty: the signal takes the synchronous
 * path, which reports the precise error (`UNKNOWN_SIGNAL`, `INVALID_INPUT`).
 */
export async function acceptingDefinitions(
  registry: WorkflowRegistry,
  name: string,
  payload: unknown,
): Promise<string[]> {
  const keys: string[] = [];
  for (const def of registry.all()) {
    const wf = compileWorkflow(def);
    if (!wf.signals.has(name) && !def.acceptUnknownSignals) continue;
    const schema = declaredSchemas(def)?.signals[name];
    if (schema && (await schemaIssues(schema, payload, 'payload')).length) continue;
    keys.push(`${def.name}@${def.version}@${wf.hash}`);
  }
  return keys;
}
