import { child } from '../reducer/kinds/child.js';
import { map } from '../reducer/kinds/map.js';
import { ChildEffects } from '../runner/child-effects.js';
import type { ChildEffectsOptions, ChildEffectsPort, RunnerKindSet } from '../runner/child-port.js';
import { checkRegisteredChildren } from './registered-children.js';

// `@stepfold/engine`: child workflows and map steps as a value. Their definitions parse
// anywhere; their reducer rules and the runner's child effects come with this value, and only the
// calls it is passed to run them.

/** The kind set of child workflows and map steps, as {@link composition} is typed. */
export interface Composition extends RunnerKindSet<'child' | 'map'> {
  readonly name: 'composition';
  readonly childEffects: (o: ChildEffectsOptions) => ChildEffectsPort;
}

/**
 * Child workflow and map steps, for the `kinds` option of `createRunner`, `step` and `createHarness`.
 * A definition with a `.child()` or `.map()` step runs only where it is passed.
 *
 * @example
 * import { composition } from '@stepfold/engine';
 * const runner = createRunner({ store, workflows: [order, payment], handlers, kinds: [composition] });
 * step(order, null, { type: 'start', at: 0, id: 'o-1', input }, { kinds: [composition] });
 */
export const composition: Composition = Object.freeze({
  name: 'composition',
  rules: { child, map },
  childEffects: (o: ChildEffectsOptions) => new ChildEffects(o),
  checkRegistered: checkRegisteredChildren,
});
