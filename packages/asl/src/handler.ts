import type { Handler } from '@stepfold/engine';
import { AslRuntimeError } from './errors.js';
import type { AslImport } from './from-asl.js';
import type { HashFunction } from './intrinsics.js';
import { invokeTask, type ResourceMap } from './lambda.js';
import { ASL_HANDLER, type AslPlan } from './plan.js';
import { currentOf, highestSeq, isStateOutput, iterationOf, type StateOutput } from './state-output.js';
import { evaluateState, type StateCall } from './states.js';
import type { AslTraceEntry } from './trace.js';

/** The context object's fields the execution provides (`$$.Execution`, `$$.StateMachine`, ...). */
export type AslContext = Record<string, unknown>;

/** Options of {@link aslHandlers}. */
export interface AslHandlerOptions {
  /** The Lambda functions Task states call, by function ARN or name, or a function that finds one. */
  resources: ResourceMap;
  /**
   * `lambda:invoke` tasks: `payload` (default) hands the function `Parameters.Payload` and wraps
   * its return as the integration does (`{ ExecutedVersion, Payload, StatusCode }`); `envelope`
   * hands it the resolved Parameters and takes its return as the whole response.
   */
  invoke?: 'payload' | 'envelope';
  /** The context object's execution fields for an instance (default: ids from the instance). */
  context?: (instance: { instanceId: string; input: unknown }) => AslContext;
  /** The clock for Wait and Retry times, epoch ms (default `Date.now`). */
  now?: () => number;
  /** For `States.Hash`. */
  hash?: HashFunction;
  /** For `JitterStrategy: FULL`, in [0, 1) (default `Math.random`). */
  random?: () => number;
  /** Called after each generated step runs: what an {@link AslTrace} turns into a history. */
  trace?: (entry: AslTraceEntry) => void;
}

/**
 * The handlers an imported state machine runs with: one handler, `asl.state`, that evaluates the
 * ASL state behind each generated step and calls the Lambda functions of its Task states.
 *
 * @example
 * const handlers = aslHandlers(imported, { resources: { charge: async (input) => ({ ok: true }) } });
 * const runner = createRunner({ store, workflows: [defineWorkflow(imported.definition), ...imported.workflows.map(defineWorkflow)], handlers, kinds: [composition] });
 */
export function aslHandlers(
  imported: AslImport | AslPlan,
  options: AslHandlerOptions,
): Record<string, Handler> {
  const plan: AslPlan =
    'plan' in imported && 'machine' in imported ? (imported as AslImport).plan : (imported as AslPlan);
  const handler: Handler = async (ctx) => {
    const p = plan[ctx.step];
    if (!p) throw new Error(`step ${ctx.step} is not part of this imported state machine`);
    const outputs = (ctx.outputs ?? {}) as Record<string, unknown>;
    const seq = highestSeq(outputs) + 1;
    if (p.role === 'again') return { ...(outputs[p.of] as StateOutput), seq };
    const current = currentOf(p.scope, outputs, ctx.workflowInput);
    const iteration = iterationOf(ctx.workflowInput);
    const base = iteration
      ? iteration.context
      : {
          ...(options.context?.({ instanceId: ctx.instanceId, input: ctx.workflowInput }) ??
            defaultContext(ctx.instanceId, ctx.workflowInput, options)),
        };
    const calls: AslTraceEntry['calls'] = [];
    const call: StateCall = {
      plan: p,
      current,
      outputs,
      context: withInput(base, iteration ? undefined : ctx.workflowInput),
      options,
      invoke: async (task) => {
        try {
          const result = await invokeTask(task, options);
          calls.push({ kind: task.kind, ok: true });
          return result;
        } catch (e) {
          calls.push({ kind: task.kind, ok: false });
          throw e;
        }
      },
    };
    const retry = p.role === 'state' && current.from === p.decider && current.out?.route === 'retry';
    const report = (output: StateOutput | undefined, thrown?: AslRuntimeError) =>
      options.trace?.({
        instanceId: ctx.instanceId,
        step: ctx.step,
        plan: p,
        input: p.role === 'after' ? undefined : retry ? current.out?.retry?.input : current.value,
        output,
        ...(thrown ? { thrown: { error: thrown.error, cause: thrown.causeText ?? '' } } : {}),
        calls,
        ...(iteration ? { iteration: { index: iteration.index, map: iteration.map } } : {}),
        retry,
        ...(p.role === 'after' && p.map !== undefined ? { failedItems: failedItems(outputs[p.map]) } : {}),
      });
    let out: StateOutput;
    try {
      out = await evaluateState(call);
    } catch (e) {
      if (e instanceof AslRuntimeError) report(undefined, e);
      throw e;
    }
    out.seq = seq;
    report(out);
    return out;
  };
  return { [ASL_HANDLER]: handler };
}

function failedItems(results: unknown): number[] {
  const out: number[] = [];
  if (Array.isArray(results))
    results.forEach((r, i) => isStateOutput(r) && r.error !== undefined && out.push(i));
  return out;
}

function withInput(base: AslContext, input: unknown): AslContext {
  if (input === undefined) return base;
  const execution = (base['Execution'] ?? {}) as Record<string, unknown>;
  return { ...base, Execution: { ...execution, Input: input } };
}

function defaultContext(instanceId: string, input: unknown, options: AslHandlerOptions): AslContext {
  const now = new Date((options.now ?? Date.now)()).toISOString();
  return {
    Execution: { Id: instanceId, Input: input, Name: instanceId, StartTime: now, RedriveCount: 0 },
    StateMachine: { Id: 'stepfold', Name: 'stepfold' },
    State: { EnteredTime: now },
  };
}
