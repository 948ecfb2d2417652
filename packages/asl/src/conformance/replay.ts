import { AslRuntimeError } from '../errors.js';
import type { LambdaCall, LambdaFunction } from '../lambda.js';
import type { RecordedInvocation } from './corpus.js';
import { type Mask, normaliseValue, sameJson } from './normalise.js';

// Lambda stand-ins in replay mode: each call takes the recorded invocation it matches, asserts
// the engine sent the recorded input, and returns the recorded result (or fails with its error).

/** A call the recording does not have, or one made out of order. */
export class ReplayMismatch extends Error {
  override readonly name = 'ReplayMismatch';
}

/** The stand-ins for one run, and what they saw. */
export interface StandIns {
  resources: (call: LambdaCall) => LambdaFunction;
  /** Problems found (a call not recorded, out of order); empty when every call matched. */
  problems: string[];
  /** Recorded invocations no call took. */
  unused(): RecordedInvocation[];
}

/** Stand-ins over a run's recorded invocations. */
export function standIns(recorded: readonly RecordedInvocation[], masks: readonly Mask[]): StandIns {
  const used = recorded.map(() => false);
  const problems: string[] = [];
  const fn: LambdaFunction = (_payload, call) => {
    const input = normaliseValue(call.input, masks);
    // Outside Parallel and Map blocks the global order must match; inside, any unused entry of
    // the state with the same input (branches and iterations interleave).
    const i = recorded.findIndex((r, k) => !used[k] && r.state === call.state && sameJson(r.input, input));
    if (i < 0) {
      const expected = recorded.find((r, k) => !used[k] && r.state === call.state);
      const msg = expected
        ? `Lambda call of ${call.state}: input ${JSON.stringify(input)} is not the recorded ${JSON.stringify(expected.input)}`
        : `Lambda call of ${call.state} not in the recording`;
      problems.push(msg);
      throw new ReplayMismatch(msg);
    }
    const r = recorded[i]!;
    if (r.block === undefined) {
      const skipped = recorded.findIndex((x, k) => k < i && !used[k] && x.block === undefined);
      if (skipped >= 0)
        problems.push(
          `Lambda call of ${call.state} came before the recorded call of ${recorded[skipped]!.state}`,
        );
    }
    used[i] = true;
    const result = r.result;
    if ('output' in result) return structuredClone(result.output);
    throw new AslRuntimeError(result.error, result.cause ?? null);
  };
  return {
    resources: () => fn,
    problems,
    unused: () => recorded.filter((_, k) => !used[k]),
  };
}
