import { LIMIT_RULES } from '../reducer/throttle.js';
import type { RunnerKindSet } from '../runner/child-port.js';
import { flowGate } from '../runner/flow-gate.js';
import type { MakeFlowGate } from '../runner/flow-port.js';

// `@stepfold/engine`: flow limits as a value. A definition's `concurrency` and `rateLimit` parse
// anywhere; the reducer's rules that resolve and wait for them, and the runner's gate that asks
// the store, come with this value, and only the calls it is passed to run them.

/** The kind set of flow limits, as {@link flowControl} is typed: no step kind, the limits' rules and gate. */
export interface FlowControl extends RunnerKindSet {
  readonly name: 'flowControl';
  readonly limits: NonNullable<RunnerKindSet['limits']>;
  readonly flowGate: MakeFlowGate;
}

/**
 * Flow limits (`concurrency` and `rateLimit` on task and map steps, `concurrency` on a workflow),
 * for the `kinds` option of `createRunner`, `step` and `createHarness`; it goes beside
 * `composition` when both are used. A definition with limits runs only where it is passed.
 *
 * @example
 * import { composition, flowControl } from '@stepfold/engine';
 * const runner = createRunner({ store, workflows: [order], handlers, kinds: [flowControl] });
 * createHarness(order, { kinds: [composition, flowControl] });
 */
export const flowControl: FlowControl = Object.freeze({
  name: 'flowControl',
  rules: {},
  limits: LIMIT_RULES,
  flowGate,
});
