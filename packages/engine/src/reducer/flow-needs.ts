import { readPath } from '../definition/data-path.js';
import { type FlowLimit, limitList, type RateLimit, type StepLimits } from '../definition/flow-limits.js';
import type { WorkflowDefinition } from '../definition/schema.js';
import type { FlowNeed } from '../flow-need.js';
import type { ErrorInfo } from '../snapshot.js';

// What a limited attempt (or instance) needs, resolved from the data when it is dispatched, and
// the holder ids the runner gives the store for it.

export { instanceHolder, taskHolder } from '../flow-holders.js';

/** What a key path held, in a message. */
function described(v: unknown): string {
  if (v === undefined) return 'nothing (missing)';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return String(v);
  return `a${typeof v === 'object' ? 'n' : ''} ${typeof v}`;
}

/** A key value as the store counts it: a string as is, a finite number or a boolean as text; else undefined. */
export function keyText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean') return String(v);
  return undefined;
}

/**
 * The needs of a step's (or workflow's) limits over `data`: concurrency first, then rate limits,
 * in the order written; `scope` unless a limit names its own. An error (`INVALID_FLOW_KEY`) when a
 * key path holds no string, finite number or boolean. Undefined when there are no limits.
 */
export function resolveNeeds(
  limits: StepLimits,
  scope: string,
  data: unknown,
): FlowNeed[] | ErrorInfo | undefined {
  const list: Array<FlowLimit | RateLimit> = [
    ...limitList<FlowLimit>(limits.concurrency),
    ...limitList<RateLimit>(limits.rateLimit),
  ];
  if (list.length === 0) return undefined;
  const needs: FlowNeed[] = [];
  for (const l of list) {
    let key = '';
    if (l.key !== undefined) {
      const v = readPath(data, l.key);
      const text = keyText(v);
      if (text === undefined)
        return {
          message: `flow limit key ${l.key} must hold a string, a finite number or a boolean; found ${described(v)}`,
          code: 'INVALID_FLOW_KEY',
          retryable: false,
        };
      key = text;
    }
    const need: FlowNeed = { scope: l.scope ?? scope, key, limit: l.limit };
    if ('periodMs' in l) need.periodMs = l.periodMs;
    needs.push(need);
  }
  return needs;
}

/** The instance limits of a workflow over its input (see {@link resolveNeeds}). */
export function workflowNeeds(def: WorkflowDefinition, input: unknown): FlowNeed[] | ErrorInfo | undefined {
  if (def.concurrency === undefined) return undefined;
  return resolveNeeds({ concurrency: def.concurrency }, def.name, { input });
}
