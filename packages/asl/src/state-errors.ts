import { AslRuntimeError } from './errors.js';
import { errorOutput } from './map-tolerance.js';
import { applyResultPath, assign, type PipelineEnv } from './pipeline.js';
import type { AslScope, StepPlan } from './plan.js';
import { type CarriedError, isStateOutput, type StateOutput } from './state-output.js';
import type { StateCall } from './states.js';

// What a state does with an error its work ended in: Retry, then Catch, then raise; and how a
// runtime error's cause names the state that raised it, as AWS words it.

/** How a runtime error's cause starts: it names the state that raised it. */
export const RUNTIME_PREFIX = 'An error occurred while executing the state';

/** A runtime error's cause as AWS words it: the state, the event it was entered at, then the detail. */
export function stateCause(call: StateCall, detail: string | null): string {
  if (detail?.startsWith(RUNTIME_PREFIX)) return detail;
  return `${RUNTIME_PREFIX} '${call.plan.name}' (entered at the event id #${enteredEventId(call)}). ${detail ?? ''}`;
}

/** An error no handler of the state takes: raised at the top, carried to the end of a branch or iteration. */
export function raise(
  scope: AslScope,
  error: CarriedError,
  out: (o: Partial<StateOutput>) => StateOutput,
): StateOutput {
  if (scope.kind === 'top') throw new AslRuntimeError(error.error, error.cause);
  return out({ error, route: 'error' });
}

/** Whether an error name is matched by a Retry's or Catch's `ErrorEquals`. */
function matches(names: unknown, error: string | null): boolean {
  if (!Array.isArray(names)) return false;
  return names.some(
    (n) =>
      n === error ||
      (n === 'States.ALL' && error !== 'States.Runtime') ||
      (n === 'States.TaskFailed' && error !== 'States.Runtime' && error !== 'States.Timeout'),
  );
}

/** What a catcher makes of an error: the state's output and variables (JSONata states bring their own). */
export type CatchOutput = (
  catcher: Record<string, unknown>,
  errorOutput: Record<string, unknown>,
) => Promise<Pick<StateOutput, 'value' | 'vars' | 'assigned'>>;

/** Retry, then Catch, then raise: what a state does with an error its work ended in. */
export async function handleError(
  call: StateCall,
  error: CarriedError,
  raw: unknown,
  env: PipelineEnv,
  out: (o: Partial<StateOutput>) => StateOutput,
  catchOutput?: CatchOutput,
): Promise<StateOutput> {
  const { plan } = call;
  const state = plan.state;
  if (error.fatal || error.error === 'States.Runtime') {
    if (plan.scope.kind === 'top') throw new AslRuntimeError(error.error, error.cause);
    return out({ error: { ...error, fatal: true }, route: 'error' });
  }
  const prior =
    plan.role === 'after'
      ? undefined
      : call.current.from === (plan.role === 'state' ? plan.decider : '') &&
          call.current.out?.route === 'retry'
        ? call.current.out.retry
        : undefined;
  const own = plan.role === 'after' ? findOwnRetry(call, plan) : prior;
  const retriers = (Array.isArray(state['Retry']) ? state['Retry'] : []) as Array<Record<string, unknown>>;
  const counts = own?.counts.slice() ?? retriers.map(() => 0);
  const i = retriers.findIndex((r) => matches(r['ErrorEquals'], error.error));
  if (i >= 0) {
    const r = retriers[i]!;
    const max = typeof r['MaxAttempts'] === 'number' ? r['MaxAttempts'] : 3;
    if ((counts[i] ?? 0) < max) {
      const interval = typeof r['IntervalSeconds'] === 'number' ? r['IntervalSeconds'] : 1;
      const rate = typeof r['BackoffRate'] === 'number' ? r['BackoffRate'] : 2;
      let delay = interval * rate ** (counts[i] ?? 0);
      if (typeof r['MaxDelaySeconds'] === 'number') delay = Math.min(delay, r['MaxDelaySeconds']);
      if (r['JitterStrategy'] === 'FULL') delay *= (call.options.random ?? Math.random)();
      counts[i] = (counts[i] ?? 0) + 1;
      const now = (call.options.now ?? Date.now)();
      return out({
        route: 'retry',
        until: now + Math.round(delay * 1000),
        retry: { input: raw, counts, attempts: (own?.attempts ?? 0) + 1 },
        error,
      });
    }
  }
  const catchers = (Array.isArray(state['Catch']) ? state['Catch'] : []) as Array<Record<string, unknown>>;
  const c = catchers.findIndex((h) => matches(h['ErrorEquals'], error.error));
  if (c >= 0) {
    const h = catchers[c]!;
    const output = errorOutput(error);
    if (catchOutput) return out({ ...(await catchOutput(h, output)), route: `catch:${c}`, caught: error });
    const a = assign(h['Assign'], output, env);
    const value = applyResultPath(raw, output, h['ResultPath']);
    return out({
      value,
      vars: a.variables,
      route: `catch:${c}`,
      caught: error,
      ...(h['Assign'] === undefined ? {} : { assigned: a.assigned }),
    });
  }
  return raise(plan.scope, error, out);
}

/** The retry counts a Map's or Parallel's second step left on its previous attempt, if this is a retry. */
export function findOwnRetry(
  call: StateCall,
  plan: Extract<StepPlan, { role: 'after' }>,
): StateOutput['retry'] {
  const first = call.outputs[plan.first];
  if (!isStateOutput(first)) return undefined;
  // A retried Map or Parallel carries its counts on its first step, where the second finds them.
  return first.retry;
}

/** The AWS event id the state's entry had, counted roughly (causes cite it; compare with N4). */
function enteredEventId(call: StateCall): number {
  let n = 0;
  for (const v of Object.values(call.outputs)) if (isStateOutput(v)) n++;
  return 2 * n + 2;
}
