import { AslRuntimeError } from './errors.js';
import { type JsonataEnv, resolveJsonata } from './jsonata.js';
import { type PipelineEnv, selectPath } from './pipeline.js';
import type { AslState } from './plan.js';
import type { CarriedError } from './state-output.js';

// A Map's tolerated failures: `ToleratedFailureCount` and `ToleratedFailurePercentage` (literal,
// their `…Path` forms, or JSONata expressions). A Map with either goes on past failed iterations
// as long as neither bound is exceeded, each failed iteration's slot holding its error output
// (`{ Error, Cause }`); past a bound it fails with `States.ExceedToleratedFailureThreshold`. A bound
// that is not given does not apply; with neither, the first failed iteration's error is the Map's.

/** The error a Map raises when more of its iterations failed than it tolerates. */
export const THRESHOLD_ERROR = 'States.ExceedToleratedFailureThreshold';

/** The fields that give a Map a tolerance (JSONPath; JSONata states have the first two only). */
export const TOLERANCE_FIELDS = [
  'ToleratedFailureCount',
  'ToleratedFailureCountPath',
  'ToleratedFailurePercentage',
  'ToleratedFailurePercentagePath',
] as const;

/** How many failed iterations a Map tolerates: at most `count`, at most `percent` % of its items. */
export interface Tolerance {
  count?: number | undefined;
  percent?: number | undefined;
}

/** Whether the state declares a tolerance at all. */
export function hasTolerance(state: AslState): boolean {
  return TOLERANCE_FIELDS.some((f) => state[f] !== undefined);
}

/** Whether `v` is a valid count (a non-negative integer). */
export function validCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

/** Whether `v` is a valid percentage (a number from 0 to 100). */
export function validPercent(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 100;
}

/** A JSONPath Map's tolerance, its paths read from the effective input; undefined without one. */
export function jsonPathTolerance(state: AslState, eff: unknown, env: PipelineEnv): Tolerance | undefined {
  if (!hasTolerance(state)) return undefined;
  const read = (field: string, valid: (v: unknown) => v is number, what: string): number | undefined => {
    const path = state[`${field}Path`];
    if (typeof path !== 'string') return state[field] as number | undefined;
    const v = selectPath(eff, path, `${field}Path`, env);
    if (!valid(v))
      throw new AslRuntimeError(
        'States.Runtime',
        `The ${field}Path field refers to value ${JSON.stringify(v) ?? 'undefined'} which is not ${what}: ${path}`,
      );
    return v;
  };
  return {
    count: read('ToleratedFailureCount', validCount, 'a valid non-negative integer'),
    percent: read('ToleratedFailurePercentage', validPercent, 'a valid number from 0 to 100'),
  };
}

/** A JSONata Map's tolerance, its expressions evaluated; undefined without one. */
export async function jsonataTolerance(state: AslState, env: JsonataEnv): Promise<Tolerance | undefined> {
  if (!hasTolerance(state)) return undefined;
  const read = async (
    field: string,
    valid: (v: unknown) => v is number,
    what: string,
  ): Promise<number | undefined> => {
    if (state[field] === undefined) return undefined;
    const v = await resolveJsonata(state[field], field, env);
    if (!valid(v))
      throw new AslRuntimeError(
        'States.QueryEvaluationError',
        `The ${field} field must evaluate to ${what}, not ${JSON.stringify(v) ?? 'undefined'}`,
      );
    return v;
  };
  return {
    count: await read('ToleratedFailureCount', validCount, 'a non-negative integer'),
    percent: await read('ToleratedFailurePercentage', validPercent, 'a number from 0 to 100'),
  };
}

/** An error as a catcher's `ResultPath` and a tolerated iteration's slot show it. */
export function errorOutput(error: CarriedError): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (error.error !== null) out['Error'] = error.error;
  if (error.cause !== null) out['Cause'] = error.cause;
  return out;
}

/**
 * What a Map's (or a Parallel's) iterations come to: the values in order, or the error the state
 * raises. Without a tolerance the first failure is the state's; with one, failures within it
 * leave their error output in their slot.
 */
export function settle(
  results: ReadonlyArray<{ value?: unknown; error?: CarriedError | undefined }>,
  tolerance: Tolerance | undefined,
): { values: unknown[] } | { error: CarriedError } {
  let failed = 0;
  let first: CarriedError | undefined;
  for (const r of results)
    if (r.error !== undefined) {
      failed++;
      first ??= r.error;
    }
  if (!first) return { values: results.map((r) => r.value) };
  if (!tolerance) return { error: first };
  const total = results.length;
  const { count, percent } = tolerance;
  // AWS fails a Map that exceeds either bound given: more failures than the count, or a share above the percentage.
  if ((count !== undefined && failed > count) || (percent !== undefined && failed * 100 > percent * total))
    return {
      error: {
        error: THRESHOLD_ERROR,
        cause: `${failed} of ${total} iterations failed, more than the Map tolerates`,
      },
    };
  return { values: results.map((r) => (r.error === undefined ? r.value : errorOutput(r.error))) };
}
