import { evaluateRule } from './choice-rules.js';
import { AslRuntimeError } from './errors.js';
import type { AslHandlerOptions } from './handler.js';
import { jsonataState } from './jsonata-states.js';
import { lambdaCall } from './lambda.js';
import { jsonPathTolerance, settle } from './map-tolerance.js';
import {
  applyResultPath,
  assign,
  expression,
  type PipelineEnv,
  resolveTemplate,
  selectPath,
} from './pipeline.js';
import type { AslState, StepPlan } from './plan.js';
import { handleError, RUNTIME_PREFIX, raise, stateCause } from './state-errors.js';
import {
  type CarriedError,
  type Current,
  currentOf,
  type IterationInput,
  isStateOutput,
  type StateOutput,
} from './state-output.js';
import { parseTimestamp, timestampMs } from './timestamps.js';

/** The errors whose cause names the state and its entry event. */
const WRAPPED = new Set(['States.Runtime', 'States.QueryEvaluationError']);

// What the ASL handler does at one generated step: the state's work between its input (the
// scope's current value) and the output it writes, with the route the choice step after it takes.

/** Everything {@link evaluateState} needs for one step. */
export interface StateCall {
  plan: StepPlan;
  current: Current;
  outputs: Readonly<Record<string, unknown>>;
  /** The context object without `State` and `Map`: the execution's fields. */
  context: Record<string, unknown>;
  options: AslHandlerOptions;
  invoke: (call: ReturnType<typeof lambdaCall>) => Promise<unknown>;
}

/** Runs the step's part of its state and returns its output (`seq` is set by the caller). */
export async function evaluateState(call: StateCall): Promise<StateOutput> {
  const { plan } = call;
  const state = plan.state;
  const retrying =
    plan.role === 'state' && call.current.from === plan.decider && call.current.out?.route === 'retry'
      ? call.current.out.retry
      : undefined;
  const first = plan.role === 'after' ? (call.outputs[plan.first] as StateOutput) : undefined;
  const raw = first ? first.input : retrying ? retrying.input : call.current.value;
  const vars = first ? first.vars : call.current.vars;
  const attempts = retrying?.attempts ?? 0;
  const env: PipelineEnv = {
    context: stateContext(call.context, plan.name, state.Type === 'Task' ? attempts : undefined),
    variables: vars,
    hash: call.options.hash,
  };
  const resource = state.Type === 'Task' ? { resource: state['Resource'] as string } : {};
  const out = (o: Partial<StateOutput>): StateOutput => ({
    seq: 0,
    state: plan.name,
    type: state.Type,
    ...resource,
    vars,
    ...o,
  });
  try {
    if (plan.jsonata) return await jsonataState(call, { raw, vars, retrying, env, out });
    if (plan.role === 'after') return await afterStep(call, plan, raw, env, out);
    if (plan.role === 'again') throw new Error("the again step copies its task's output");
    switch (state.Type) {
      case 'Pass': {
        const eff = selectPath(raw, state['InputPath'], 'InputPath', env);
        let result = state['Parameters'] !== undefined ? resolveTemplate(state['Parameters'], eff, env) : eff;
        if (Object.hasOwn(state, 'Result')) result = state['Result'];
        return finish(state, raw, result, env, out);
      }
      case 'Succeed': {
        const eff = selectPath(raw, state['InputPath'], 'InputPath', env);
        return out({ value: selectPath(eff, state['OutputPath'], 'OutputPath', env), route: 'next' });
      }
      case 'Fail': {
        const error = text(state, 'Error', 'ErrorPath', raw, env);
        const cause = text(state, 'Cause', 'CausePath', raw, env);
        return raise(plan.scope, { error, cause }, out);
      }
      case 'Choice': {
        const eff = selectPath(raw, state['InputPath'], 'InputPath', env);
        const rules = state['Choices'] as Array<Record<string, unknown>>;
        const scope = { data: eff, context: env.context, variables: vars };
        const i = rules.findIndex((r) => evaluateRule(r, scope));
        if (i < 0 && typeof state['Default'] !== 'string')
          return raise(plan.scope, { error: 'States.NoChoiceMatched', cause: 'No Matches!' }, out);
        const a = assign(state['Assign'], eff, env);
        const r =
          i >= 0 && rules[i]!['Assign'] !== undefined
            ? assign(rules[i]!['Assign'], eff, env)
            : { variables: {}, assigned: {} };
        const value = selectPath(eff, state['OutputPath'], 'OutputPath', env);
        const assigned = { ...a.assigned, ...r.assigned };
        const any = state['Assign'] !== undefined || (i >= 0 && rules[i]!['Assign'] !== undefined);
        return out({
          value,
          vars: { ...vars, ...assigned },
          route: i >= 0 ? `rule:${i}` : 'default',
          ...(any ? { assigned } : {}),
        });
      }
      case 'Wait': {
        const eff = selectPath(raw, state['InputPath'], 'InputPath', env);
        const until = waitUntil(state, eff, env, call.options);
        const a = assign(state['Assign'], eff, env);
        const value = selectPath(eff, state['OutputPath'], 'OutputPath', env);
        return out({
          value,
          vars: a.variables,
          route: 'next',
          ...(until === undefined ? {} : { until }),
          ...assignedOf(state, a.assigned),
        });
      }
      case 'Task': {
        const eff = selectPath(raw, state['InputPath'], 'InputPath', env);
        const payload =
          state['Parameters'] !== undefined ? resolveTemplate(state['Parameters'], eff, env) : eff;
        let result: unknown;
        try {
          result = await call.invoke(lambdaCall(plan.name, state['Resource'] as string, payload));
        } catch (e) {
          if (!(e instanceof AslRuntimeError)) throw e;
          return handleError(call, { error: e.error, cause: e.causeText }, raw, env, out);
        }
        const selected =
          state['ResultSelector'] !== undefined
            ? resolveTemplate(state['ResultSelector'], result, env)
            : result;
        return finish(state, raw, selected, env, out);
      }
      case 'Map':
        return mapFirst(plan.name, state, raw, env, (o) =>
          out({ ...o, ...(retrying ? { retry: retrying } : {}) }),
        );
      case 'Parallel': {
        const eff = selectPath(raw, state['InputPath'], 'InputPath', env);
        const value =
          state['Parameters'] !== undefined ? resolveTemplate(state['Parameters'], eff, env) : eff;
        return out({ value, input: raw, route: 'next', ...(retrying ? { retry: retrying } : {}) });
      }
    }
    throw new AslRuntimeError('States.Runtime', `state type ${state.Type} is not supported`);
  } catch (e) {
    if (!(e instanceof AslRuntimeError) || !WRAPPED.has(e.error ?? '')) throw e;
    if (e.causeText?.startsWith(RUNTIME_PREFIX)) throw e;
    // Runtime errors name the state; no Retry or Catch applies to them.
    throw new AslRuntimeError(e.error, stateCause(call, e.causeText));
  }
}

/** The context object a state's paths see (`RetryCount` only in Task states, as AWS gives it). */
export function stateContext(
  base: Record<string, unknown>,
  name: string,
  retryCount: number | undefined,
): Record<string, unknown> {
  const entered = ((base['State'] ?? {}) as { EnteredTime?: unknown }).EnteredTime;
  const state: Record<string, unknown> = { EnteredTime: entered ?? new Date().toISOString(), Name: name };
  if (retryCount !== undefined) state['RetryCount'] = retryCount;
  return { ...base, State: state };
}

/** ResultSelector's output onward: Assign, ResultPath onto the raw input, OutputPath. */
function finish(
  state: AslState,
  raw: unknown,
  result: unknown,
  env: PipelineEnv,
  out: (o: Partial<StateOutput>) => StateOutput,
): StateOutput {
  const a = assign(state['Assign'], result, env);
  const merged = applyResultPath(raw, result, state['ResultPath']);
  const value = selectPath(merged, state['OutputPath'], 'OutputPath', env);
  return out({ value, vars: a.variables, route: 'next', ...assignedOf(state, a.assigned) });
}

function assignedOf(state: AslState, assigned: Record<string, unknown>): Partial<StateOutput> {
  return state['Assign'] === undefined ? {} : { assigned };
}

function text(
  state: AslState,
  field: string,
  pathField: string,
  raw: unknown,
  env: PipelineEnv,
): string | null {
  if (typeof state[field] === 'string') return state[field];
  if (typeof state[pathField] !== 'string') return null;
  const v = expression(state[pathField], raw, pathField, env);
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export function waitUntil(
  state: AslState,
  eff: unknown,
  env: PipelineEnv,
  options: AslHandlerOptions,
): number | undefined {
  const now = (options.now ?? Date.now)();
  if (typeof state['Seconds'] === 'number') return undefined;
  if (typeof state['SecondsPath'] === 'string') {
    const v = selectPath(eff, state['SecondsPath'], 'SecondsPath', env);
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
      throw new AslRuntimeError(
        'States.Runtime',
        `The SecondsPath parameter cannot be parsed as a long value: ${state['SecondsPath']} == ${typeof v === 'string' ? v : JSON.stringify(v)}`,
      );
    return now + v * 1000;
  }
  const path = state['TimestampPath'];
  const v = typeof path === 'string' ? selectPath(eff, path, 'TimestampPath', env) : state['Timestamp'];
  const t = typeof v === 'string' ? parseTimestamp(v) : null;
  if (t === null)
    throw new AslRuntimeError(
      'States.Runtime',
      typeof path === 'string'
        ? `The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: ${path} == ${typeof v === 'string' ? v : JSON.stringify(v)}`
        : `The Timestamp parameter is not a valid ISO-8601 extended offset date-time: ${String(v)}`,
    );
  return Math.max(now, timestampMs(t));
}

/** A Map's first step: its effective input, the items and each iteration's input. */
function mapFirst(
  name: string,
  state: AslState,
  raw: unknown,
  env: PipelineEnv,
  out: (o: Partial<StateOutput>) => StateOutput,
): StateOutput {
  const eff = selectPath(raw, state['InputPath'], 'InputPath', env);
  if (typeof state['MaxConcurrencyPath'] === 'string') {
    const m = selectPath(eff, state['MaxConcurrencyPath'], 'MaxConcurrencyPath', env);
    if (typeof m !== 'number' || !Number.isInteger(m) || m < 0)
      throw new AslRuntimeError(
        'States.Runtime',
        `The MaxConcurrencyPath field refers to value ${JSON.stringify(m)} which is not a valid integer: ${state['MaxConcurrencyPath']}`,
      );
  }
  const items = selectPath(eff, state['ItemsPath'], 'ItemsPath', env);
  if (!Array.isArray(items))
    throw new AslRuntimeError(
      'States.Runtime',
      `Invalid path '${String(state['ItemsPath'] ?? '$')}': the Map's items are not an array`,
    );
  const tolerated = jsonPathTolerance(state, eff, env);
  const selector = state['ItemSelector'] ?? state['Parameters'];
  const context = env.context as Record<string, unknown>;
  const base = { ...context };
  delete base['State'];
  const wrapped: IterationInput[] = items.map((item, index) => {
    const value =
      selector === undefined
        ? item
        : resolveTemplate(selector, eff, {
            ...env,
            context: { ...context, Map: { Item: { Index: index, Value: item } } },
          });
    return {
      $aslIteration: {
        value,
        vars: env.variables as Record<string, unknown>,
        context: base,
        index,
        map: name,
      },
    };
  });
  return out({ value: eff, input: raw, items: wrapped, route: 'next', ...(tolerated ? { tolerated } : {}) });
}

/** What a Map's iterations or a Parallel's branches ended with, in order. */
export function gatherResults(
  call: StateCall,
  plan: Extract<StepPlan, { role: 'after' }>,
): Array<{ value?: unknown; error?: CarriedError | undefined }> {
  const results: Array<{ value?: unknown; error?: CarriedError | undefined }> = [];
  if (plan.map !== undefined) {
    const list = call.outputs[plan.map];
    for (const r of Array.isArray(list) ? list : []) results.push(isStateOutput(r) ? r : { value: r });
  } else {
    for (const scope of plan.branches ?? []) {
      const c = currentOf(scope, call.outputs, undefined);
      results.push(c.out ?? { value: c.value });
    }
  }
  return results;
}

/** A Map's or Parallel's second step: gathers what the iterations or branches ended with. */
async function afterStep(
  call: StateCall,
  plan: Extract<StepPlan, { role: 'after' }>,
  raw: unknown,
  env: PipelineEnv,
  out: (o: Partial<StateOutput>) => StateOutput,
): Promise<StateOutput> {
  const settled = settle(gatherResults(call, plan), toleranceOf(call, plan));
  if ('error' in settled) return handleError(call, settled.error, raw, env, out);
  const state = plan.state;
  const values = settled.values;
  const selected =
    state['ResultSelector'] !== undefined ? resolveTemplate(state['ResultSelector'], values, env) : values;
  return finish(state, raw, selected, env, out);
}

/** The tolerance a Map's first step resolved (a Parallel has none). */
export function toleranceOf(
  call: StateCall,
  plan: Extract<StepPlan, { role: 'after' }>,
): StateOutput['tolerated'] {
  const first = call.outputs[plan.first];
  return plan.map !== undefined && isStateOutput(first) ? first.tolerated : undefined;
}
