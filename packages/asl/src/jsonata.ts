import jsonata from 'jsonata';
import { AslRuntimeError } from './errors.js';
import type { HashFunction } from './intrinsics.js';

// JSONata in states with `QueryLanguage: "JSONata"`: a string `{% … %}` anywhere in a field's
// value is an expression, evaluated with `$states` (input, result, errorOutput, context), the
// variables as `$name`, and Step Functions' extra functions ($partition, $range, $hash, $random,
// $uuid, $parse). Expressions compile once (cached); a result that is not JSON becomes JSON.

type Expression = ReturnType<typeof jsonata>;

const EXPRESSION = /^\{%([\s\S]*)%\}$/;

/** Whether a value is a JSONata expression string (`{% … %}`). */
export function isJsonataExpression(value: unknown): value is string {
  return typeof value === 'string' && EXPRESSION.test(value);
}

/** An expression that does not compile: the message says where. */
export class JsonataSyntaxError extends Error {
  override readonly name = 'JsonataSyntaxError';
}

const cache = new Map<string, Expression>();

/** Compiles an expression's text (without the `{% %}`), cached; throws {@link JsonataSyntaxError}. */
function compile(source: string): Expression {
  const hit = cache.get(source);
  if (hit) return hit;
  let expr: Expression;
  try {
    expr = jsonata(source);
  } catch (e) {
    const err = e as { message?: string; position?: number };
    throw new JsonataSyntaxError(
      `the JSONata expression ${JSON.stringify(source.trim())} does not compile: ${err.message ?? String(e)}${err.position === undefined ? '' : ` (at ${err.position})`}`,
    );
  }
  if (cache.size > 5000) cache.clear();
  cache.set(source, expr);
  return expr;
}

/** Compiles every expression in a field's value; returns the first problem as `[field, message]`. */
export function jsonataProblem(value: unknown, field: string): [string, string] | undefined {
  if (typeof value === 'string') {
    const m = EXPRESSION.exec(value);
    if (!m) return undefined;
    try {
      compile(m[1]!);
    } catch (e) {
      if (e instanceof JsonataSyntaxError) return [field, e.message];
      throw e;
    }
    return undefined;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = jsonataProblem(value[i], `${field}[${i}]`);
      if (p) return p;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      const p = jsonataProblem(v, `${field}.${k}`);
      if (p) return p;
    }
  return undefined;
}

/** What expressions see: `$states`, the variables, and what the extra functions draw on. */
export interface JsonataEnv {
  /** `$states`: `input`, `context`, and where they apply `result` and `errorOutput`. */
  states: Record<string, unknown>;
  variables: Readonly<Record<string, unknown>>;
  hash?: HashFunction | undefined;
  random?: (() => number) | undefined;
}

const fail = (message: string): never => {
  throw new AslRuntimeError('States.QueryEvaluationError', message);
};

/** Step Functions' functions beside JSONata's own. */
function extraFunctions(env: JsonataEnv): Record<string, unknown> {
  return {
    partition: (array: unknown, size: unknown) => {
      if (!Array.isArray(array) || typeof size !== 'number' || !Number.isInteger(size) || size < 1)
        return fail('$partition takes an array and a positive integer size');
      const out: unknown[][] = [];
      for (let i = 0; i < array.length; i += size) out.push(array.slice(i, i + size));
      return out;
    },
    range: (start: unknown, end: unknown, step: unknown = 1) => {
      if (typeof start !== 'number' || typeof end !== 'number' || typeof step !== 'number' || step === 0)
        return fail('$range takes a start, an end and a non-zero step');
      const out: number[] = [];
      for (let v = start; step > 0 ? v <= end : v >= end; v += step) {
        out.push(v);
        if (out.length > 1000) return fail('$range makes at most 1000 items');
      }
      return out;
    },
    hash: (data: unknown, algorithm: unknown) => {
      if (!env.hash) return fail('$hash needs the `hash` option of aslHandlers');
      if (typeof data !== 'string' || typeof algorithm !== 'string')
        return fail('$hash takes a string and an algorithm name');
      return env.hash(algorithm, data);
    },
    random: () => (env.random ?? Math.random)(),
    uuid: () => globalThis.crypto.randomUUID(),
    parse: (text: unknown) => {
      if (typeof text !== 'string') return fail('$parse takes a string of JSON');
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return fail(`$parse: ${JSON.stringify(text)} is not JSON`);
      }
    },
  };
}

/** JSONata's results as plain JSON (its sequences are arrays with extra properties). */
function plain(value: unknown): unknown {
  const text = JSON.stringify(value);
  return text === undefined ? undefined : JSON.parse(text);
}

/**
 * Resolves a field's value: every `{% … %}` string in it (at any depth) becomes what its
 * expression evaluates to; everything else stays as written. A failing expression, or one with
 * no result, is a `States.QueryEvaluationError` naming the field.
 */
export async function resolveJsonata(value: unknown, field: string, env: JsonataEnv): Promise<unknown> {
  if (typeof value === 'string') {
    const m = EXPRESSION.exec(value);
    if (!m) return value;
    const source = m[1]!;
    let result: unknown;
    try {
      const bindings = { ...env.variables, ...extraFunctions(env), states: env.states };
      result = await compile(source).evaluate(env.states['input'], bindings);
    } catch (e) {
      if (e instanceof AslRuntimeError) throw e;
      fail(
        `The JSONata expression '${source.trim()}' specified for the field '${field}' threw an error during evaluation: ${(e as Error).message ?? String(e)}`,
      );
    }
    result = plain(result);
    if (result === undefined)
      fail(
        `The JSONata expression '${source.trim()}' specified for the field '${field}' returned nothing (undefined).`,
      );
    return result;
  }
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) out.push(await resolveJsonata(value[i], `${field}[${i}]`, env));
    return out;
  }
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const resolved = await resolveJsonata(v, `${field}.${k}`, env);
    Object.defineProperty(out, k, { value: resolved, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * Evaluates an `Assign` block: each value against the variables as they were before the state, then
 * all are set. Returns the variables after and those assigned.
 */
export async function assignJsonata(
  block: unknown,
  env: JsonataEnv,
): Promise<{ variables: Record<string, unknown>; assigned: Record<string, unknown> }> {
  if (block === undefined) return { variables: { ...env.variables }, assigned: {} };
  const assigned = (await resolveJsonata(block, 'Assign', env)) as Record<string, unknown>;
  return { variables: { ...env.variables, ...assigned }, assigned };
}
