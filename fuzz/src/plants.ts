// Planted bugs, to show the fuzzer catches what it is for. Each is made through a seam the engine
// already has (no production hook exists for this): `RESERVED_KEYS`, the set every reserved-key
// check of a definition consults, is a module export, so removing a name from it at run time is
// the same bug as deleting that name from the source.
import { RESERVED_KEYS } from '../../packages/engine/dist/definition/step-fields.js';

const PLANTS: Record<string, { what: string; apply(): void }> = {
  'reserved-constructor': {
    what: 'the definition checks forget "constructor" (a step id or mapping key named so is accepted)',
    apply: () => (RESERVED_KEYS as Set<string>).delete('constructor'),
  },
  'reserved-prototype': {
    what: 'the definition checks forget "prototype"',
    apply: () => (RESERVED_KEYS as Set<string>).delete('prototype'),
  },
  'reserved-keys': {
    what: 'the definition checks forget every reserved key',
    apply: () => (RESERVED_KEYS as Set<string>).clear(),
  },
};

const original = [...RESERVED_KEYS];

/** Takes every planted bug out again (the set back as the engine made it). */
export function unplant(): void {
  const set = RESERVED_KEYS as Set<string>;
  set.clear();
  for (const k of original) set.add(k);
}

/** Names of the bugs {@link plant} can plant. */
export const PLANT_NAMES = Object.keys(PLANTS);

/** Plants the bug `name` in this process and says what it is. */
export function plant(name: string): string {
  const p = PLANTS[name];
  if (!p) throw new Error(`no plant ${name}; plants: ${PLANT_NAMES.join(', ')}`);
  p.apply();
  return `${name}: ${p.what}`;
}
