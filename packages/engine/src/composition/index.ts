import { registerKindRules } from '../reducer/kind-table.js';
import { child } from '../reducer/kinds/child.js';
import { map } from '../reducer/kinds/map.js';
import { ChildEffects } from '../runner/child-effects.js';
import { provideChildEffects } from '../runner/child-port.js';

// `@stepfold/engine/composition`: child workflows and map steps. Their definitions parse anywhere;
// their reducer rules and the runner's child effects live here, out of the size-capped main entry.
// Importing this module once, anywhere in the program, enables them for every runner and `step`.

registerKindRules({ child, map });
provideChildEffects((o) => new ChildEffects(o));

/**
 * The kinds this entry enables. Importing the entry is what enables them; this constant lets a
 * module say so by name (and keeps a bundler from dropping the import).
 *
 * @example
 * import { composition } from '@stepfold/engine/composition';
 * void composition; // child and map steps now run in every runner of this program
 */
export const composition = { kinds: ['child', 'map'] } as const;
