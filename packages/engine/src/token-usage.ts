import { isPayloadRef } from './payload-ref.js';
import type { Snapshot } from './snapshot.js';

// Token counts an instance carries: a step that calls a model (the agent loop of `@stepfold/ai`,
// or your own) keeps a running total of its calls' usage in its output as `usageTotal`, and the
// next run of a continue-as-new carries it in its input. This reads that total back, for `show`,
// the inspector and your own code, without knowing which workflow wrote it.

/** A running total of model usage: the tokens of every model call counted so far, and how many calls. */
export interface UsageTotal {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  modelCalls: number;
}

/** Whether `v` is a {@link UsageTotal}: four non-negative finite numbers. */
export function isUsageTotal(v: unknown): v is UsageTotal {
  if (typeof v !== 'object' || v === null) return false;
  const u = v as Record<string, unknown>;
  return ['inputTokens', 'outputTokens', 'totalTokens', 'modelCalls'].every(
    (k) => typeof u[k] === 'number' && Number.isFinite(u[k]) && (u[k] as number) >= 0,
  );
}

/** The `usageTotal` of a value, read inline or from the `keep` of its payload reference. */
function totalIn(v: unknown): UsageTotal | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const at = isPayloadRef(v) ? v.keep : (v as Record<string, unknown>);
  const t = at?.['usageTotal'];
  return isUsageTotal(t) ? t : undefined;
}

/**
 * The model usage `s` has counted: the `usageTotal` with the most model calls among its steps'
 * outputs and its input's fields (where a continue-as-new carries it), or undefined when none has one.
 */
export function tokenUsage(s: Pick<Snapshot, 'steps' | 'input'>): UsageTotal | undefined {
  let best: UsageTotal | undefined;
  const consider = (v: unknown) => {
    const t = totalIn(v);
    if (t && (!best || t.modelCalls > best.modelCalls)) best = t;
  };
  for (const id in s.steps) consider(s.steps[id]?.output);
  if (typeof s.input === 'object' && s.input !== null && !Array.isArray(s.input))
    for (const v of Object.values(s.input)) consider(v);
  return best;
}
