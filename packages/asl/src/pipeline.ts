import { AslRuntimeError } from './errors.js';
import { evaluateIntrinsic, type HashFunction, isIntrinsic } from './intrinsics.js';
import { readJsonPath, writeJsonPath } from './json-path.js';

// The JSONPath input/output pipeline of a state: InputPath, then Parameters (or ItemSelector), the
// work, ResultSelector, Assign, ResultPath onto the raw input, OutputPath. Each function takes the
// value it transforms and what paths may read besides it: the context object and the variables.

/** What paths read besides the value at hand. */
export interface PipelineEnv {
  /** The context object, `$$`. */
  context: unknown;
  /** The variables in scope (`$name`). */
  variables: Readonly<Record<string, unknown>>;
  hash?: HashFunction | undefined;
}

function json(v: unknown): string {
  return JSON.stringify(v) ?? 'null';
}

/** Reads a path field such as `InputPath` or `OutputPath` (absent: the whole value; `null`: `{}`). */
export function selectPath(value: unknown, path: unknown, _field: string, env: PipelineEnv): unknown {
  if (path === undefined || path === '$') return value;
  if (path === null) return {};
  const r = readJsonPath(path as string, { data: value, context: env.context, variables: env.variables });
  if (!r.found) {
    throw new AslRuntimeError(
      'States.Runtime',
      `Invalid path '${String(path)}' : Missing property in path ${r.missing}`,
    );
  }
  return r.value;
}

/** Evaluates a `.$` expression (a path or an intrinsic call) for the field `field`. */
export function expression(text: string, data: unknown, field: string, env: PipelineEnv): unknown {
  const scope = { data, context: env.context, variables: env.variables, hash: env.hash, field };
  if (isIntrinsic(text)) return evaluateIntrinsic(text, scope);
  const r = readJsonPath(text, scope);
  if (!r.found)
    throw new AslRuntimeError(
      'States.Runtime',
      `The JSONPath '${text}' specified for the field '${field}' could not be found in the input '${json(data)}'`,
    );
  return r.value;
}

/** Resolves a payload template (Parameters, ResultSelector, ItemSelector, Assign) against `data`. */
export function resolveTemplate(template: unknown, data: unknown, env: PipelineEnv): unknown {
  if (Array.isArray(template)) return template.map((v) => resolveTemplate(v, data, env));
  if (template === null || typeof template !== 'object') return template;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(template)) {
    const key = k.endsWith('.$') ? k.slice(0, -2) : k;
    const value = k.endsWith('.$') ? expression(v as string, data, k, env) : resolveTemplate(v, data, env);
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Applies `ResultPath` (absent: the result; `null`: the raw input unchanged). */
export function applyResultPath(raw: unknown, result: unknown, path: unknown): unknown {
  if (path === undefined || path === '$') return result;
  if (path === null) return raw;
  const r = writeJsonPath(raw, path as string, result);
  if (!r.ok)
    throw new AslRuntimeError(
      'States.Runtime',
      `Invalid path '${String(path)}': The ResultPath cannot be applied to the input '${json(raw)}'`,
    );
  return r.value;
}

/**
 * Evaluates an `Assign` block against `data` (the state's result, or its input for Choice and
 * Wait): every value is computed from the variables as they were before, then all are set.
 */
export function assign(
  block: unknown,
  data: unknown,
  env: PipelineEnv,
): { variables: Record<string, unknown>; assigned: Record<string, unknown> } {
  if (block === undefined) return { variables: { ...env.variables }, assigned: {} };
  const assigned = resolveTemplate(block, data, env) as Record<string, unknown>;
  return { variables: { ...env.variables, ...assigned }, assigned };
}
