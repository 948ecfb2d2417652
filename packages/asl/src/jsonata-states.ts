import { AslRuntimeError } from './errors.js';
import { assignJsonata, isJsonataExpression, type JsonataEnv, resolveJsonata } from './jsonata.js';
import { lambdaCall } from './lambda.js';
import { jsonataTolerance, settle } from './map-tolerance.js';
import type { PipelineEnv } from './pipeline.js';
import type { StepPlan } from './plan.js';
import { type CatchOutput, handleError, raise, stateCause } from './state-errors.js';
import type { CarriedError, IterationInput, StateOutput } from './state-output.js';
import { gatherResults, type StateCall, toleranceOf } from './states.js';
import { parseTimestamp, timestampMs } from './timestamps.js';

// A state with `QueryLanguage: "JSONata"`: `Arguments` is what its work takes (default the state
// input), `Output` what it passes on (default the work's result, or the input where there is
// none), `Assign` sets variables; both see `$states.input`, `$states.result` where there is one,
// and the variables as they were before the state. Errors in expressions are
// `States.QueryEvaluationError`, which Retry and Catch can take; a catcher's `Output` (default
// `$states.errorOutput`) and `Assign` make the state's output.

/** What {@link jsonataState} gets from the handler: the raw input, variables, retry and helpers. */
export interface JsonataCall {
  raw: unknown;
  vars: Record<string, unknown>;
  retrying: StateOutput['retry'];
  env: PipelineEnv;
  out: (o: Partial<StateOutput>) => StateOutput;
}

type Out = (o: Partial<StateOutput>) => StateOutput;

/** Runs the step's part of a JSONata state. */
export async function jsonataState(call: StateCall, j: JsonataCall): Promise<StateOutput> {
  const { plan } = call;
  const state = plan.state;
  const base = (extra: Record<string, unknown> = {}): JsonataEnv => ({
    states: { input: j.raw, context: j.env.context, ...extra },
    variables: j.vars,
    hash: call.options.hash,
    random: call.options.random,
  });
  // Output and Assign both see the variables from before the state.
  const finish = async (env: JsonataEnv, fallback: unknown, extra: Partial<StateOutput> = {}) => {
    const value =
      state['Output'] === undefined ? fallback : await resolveJsonata(state['Output'], 'Output', env);
    const a = await assignJsonata(state['Assign'], env);
    return j.out({
      value,
      vars: a.variables,
      route: 'next',
      ...extra,
      ...(state['Assign'] === undefined ? {} : { assigned: a.assigned }),
    });
  };
  const catchOutput: CatchOutput = async (catcher, errorOutput) => {
    const env = base({ errorOutput });
    const value =
      catcher['Output'] === undefined ? errorOutput : await resolveJsonata(catcher['Output'], 'Output', env);
    const a = await assignJsonata(catcher['Assign'], env);
    return { value, vars: a.variables, ...(catcher['Assign'] === undefined ? {} : { assigned: a.assigned }) };
  };
  // An expression that fails in a state with Retry or Catch goes to them, as a Task's error does.
  const failed = (e: unknown): Promise<StateOutput> => {
    if (!(e instanceof AslRuntimeError) || e.error !== 'States.QueryEvaluationError') throw e;
    const error: CarriedError = { error: e.error, cause: stateCause(call, e.causeText) };
    return handleError(call, error, j.raw, j.env, j.out, catchOutput);
  };
  if (plan.role === 'after') return afterJsonata(call, plan, j, base, finish, failed, catchOutput);
  if (plan.role === 'again') throw new Error("the again step copies its task's output");
  try {
    switch (state.Type) {
      case 'Pass':
        return await finish(base(), j.raw);
      case 'Succeed':
        return await finish(base(), j.raw);
      case 'Fail': {
        const env = base();
        const text = async (field: string) => {
          if (state[field] === undefined) return null;
          const v = await resolveJsonata(state[field], field, env);
          if (typeof v !== 'string')
            throw new AslRuntimeError(
              'States.QueryEvaluationError',
              `The ${field} field must be a string: ${JSON.stringify(v)}`,
            );
          return v;
        };
        return raise(plan.scope, { error: await text('Error'), cause: await text('Cause') }, j.out);
      }
      case 'Choice':
        return await choice(call, j, base());
      case 'Wait': {
        const env = base();
        const until = await waitUntil(state, env, call.options.now ?? Date.now);
        return await finish(env, j.raw, until === undefined ? {} : { until });
      }
      case 'Task': {
        const env = base();
        const args =
          state['Arguments'] === undefined
            ? j.raw
            : await resolveJsonata(state['Arguments'], 'Arguments', env);
        let result: unknown;
        try {
          result = await call.invoke(lambdaCall(plan.name, state['Resource'] as string, args));
        } catch (e) {
          if (!(e instanceof AslRuntimeError)) throw e;
          return await handleError(
            call,
            { error: e.error, cause: e.causeText },
            j.raw,
            j.env,
            j.out,
            catchOutput,
          );
        }
        return await finish(base({ result }), result);
      }
      case 'Parallel': {
        const args =
          state['Arguments'] === undefined
            ? j.raw
            : await resolveJsonata(state['Arguments'], 'Arguments', base());
        return j.out({
          value: args,
          input: j.raw,
          route: 'next',
          ...(j.retrying ? { retry: j.retrying } : {}),
        });
      }
      case 'Map':
        return await mapItems(call, j, base());
    }
  } catch (e) {
    return failed(e);
  }
  throw new AslRuntimeError('States.Runtime', `state type ${state.Type} is not supported`);
}

async function choice(call: StateCall, j: JsonataCall, env: JsonataEnv): Promise<StateOutput> {
  const state = call.plan.state;
  const rules = state['Choices'] as Array<Record<string, unknown>>;
  let chosen = -1;
  for (let i = 0; i < rules.length && chosen < 0; i++) {
    const c = await resolveJsonata(rules[i]!['Condition'], `Choices[${i}].Condition`, env);
    if (typeof c !== 'boolean')
      throw new AslRuntimeError(
        'States.QueryEvaluationError',
        `The Condition of Choices[${i}] must evaluate to a boolean, not ${JSON.stringify(c)}`,
      );
    if (c) chosen = i;
  }
  if (chosen < 0 && typeof state['Default'] !== 'string')
    return raise(call.plan.scope, { error: 'States.NoChoiceMatched', cause: 'No Matches!' }, j.out);
  const rule = chosen >= 0 ? rules[chosen]! : {};
  const output = rule['Output'] ?? state['Output'];
  const value = output === undefined ? j.raw : await resolveJsonata(output, 'Output', env);
  const a = await assignJsonata(state['Assign'], env);
  const r = await assignJsonata(rule['Assign'], env);
  const assigned = { ...a.assigned, ...r.assigned };
  const any = state['Assign'] !== undefined || rule['Assign'] !== undefined;
  return j.out({
    value,
    vars: { ...j.vars, ...assigned },
    route: chosen >= 0 ? `rule:${chosen}` : 'default',
    ...(any ? { assigned } : {}),
  });
}

async function waitUntil(
  state: Record<string, unknown>,
  env: JsonataEnv,
  now: () => number,
): Promise<number | undefined> {
  if (typeof state['Seconds'] === 'number') return undefined;
  if (isJsonataExpression(state['Seconds'])) {
    const v = await resolveJsonata(state['Seconds'], 'Seconds', env);
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
      throw new AslRuntimeError(
        'States.QueryEvaluationError',
        `The Seconds field must evaluate to a non-negative integer, not ${JSON.stringify(v)}`,
      );
    return now() + v * 1000;
  }
  const v = await resolveJsonata(state['Timestamp'], 'Timestamp', env);
  const t = typeof v === 'string' ? parseTimestamp(v) : null;
  if (t === null)
    throw new AslRuntimeError(
      'States.QueryEvaluationError',
      `The Timestamp field must be an ISO-8601 extended offset date-time, not ${JSON.stringify(v)}`,
    );
  return Math.max(now(), timestampMs(t));
}

/** A Map's first step: `Items` (default the input), each through `ItemSelector`. */
async function mapItems(call: StateCall, j: JsonataCall, env: JsonataEnv): Promise<StateOutput> {
  const state = call.plan.state;
  const items = state['Items'] === undefined ? j.raw : await resolveJsonata(state['Items'], 'Items', env);
  if (!Array.isArray(items))
    throw new AslRuntimeError(
      'States.QueryEvaluationError',
      `The Items field must be an array, not ${JSON.stringify(items)?.slice(0, 200)}`,
    );
  if (isJsonataExpression(state['MaxConcurrency'])) {
    const m = await resolveJsonata(state['MaxConcurrency'], 'MaxConcurrency', env);
    if (typeof m !== 'number' || !Number.isInteger(m) || m < 0)
      throw new AslRuntimeError(
        'States.QueryEvaluationError',
        `The MaxConcurrency field must evaluate to a non-negative integer, not ${JSON.stringify(m)}`,
      );
  }
  const tolerated = await jsonataTolerance(state, env);
  const context = env.states['context'] as Record<string, unknown>;
  const outer = { ...context };
  delete outer['State'];
  const wrapped: IterationInput[] = [];
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    const value =
      state['ItemSelector'] === undefined
        ? item
        : await resolveJsonata(state['ItemSelector'], 'ItemSelector', {
            ...env,
            states: { ...env.states, context: { ...context, Map: { Item: { Index: index, Value: item } } } },
          });
    wrapped.push({ $aslIteration: { value, vars: j.vars, context: outer, index, map: call.plan.name } });
  }
  return j.out({
    value: j.raw,
    input: j.raw,
    items: wrapped,
    route: 'next',
    ...(tolerated ? { tolerated } : {}),
    ...(j.retrying ? { retry: j.retrying } : {}),
  });
}

/** A JSONata Map's or Parallel's second step: `$states.result` is the list of results. */
async function afterJsonata(
  call: StateCall,
  plan: Extract<StepPlan, { role: 'after' }>,
  j: JsonataCall,
  base: (extra?: Record<string, unknown>) => JsonataEnv,
  finish: (env: JsonataEnv, fallback: unknown) => Promise<StateOutput>,
  failed: (e: unknown) => Promise<StateOutput>,
  catchOutput: CatchOutput,
): Promise<StateOutput> {
  const settled = settle(gatherResults(call, plan), toleranceOf(call, plan));
  if ('error' in settled) return handleError(call, settled.error, j.raw, j.env, j.out as Out, catchOutput);
  const values = settled.values;
  try {
    return await finish(base({ result: values }), values);
  } catch (e) {
    return failed(e);
  }
}
