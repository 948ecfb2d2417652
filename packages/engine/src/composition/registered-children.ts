import { kindOf } from '../definition/kinds/index.js';
import type { WorkflowDefinition } from '../definition/schema.js';
import { RegistryError } from '../errors.js';

// What a runner registering definitions with child steps checks of them together: the runner
// starts each child, so every child workflow (and every pinned version of one) must be registered
// too. Only `composition` brings child steps, so only it carries this.

/** Lines `workflow vN step id: what` for each step of `defs` whose child `missing` names, by what it names. */
function lines(
  byName: ReadonlyMap<string, ReadonlyMap<number, WorkflowDefinition>>,
  missing: (child: string, pinned: number | undefined) => string | undefined,
): string[] {
  return [...byName.values()].flatMap((versions) =>
    [...versions.values()].flatMap((def) =>
      Object.values(def.steps).flatMap((s) => {
        const pinned = (s as { version?: number | undefined }).version;
        return (kindOf(s).workflows?.(s) ?? []).flatMap((w) => {
          const what = missing(w, pinned);
          return what === undefined ? [] : [`${def.name} v${def.version} step ${s.id}: ${what}`];
        });
      }),
    ),
  );
}

/**
 * Throws `UNKNOWN_WORKFLOW` listing each child workflow not registered, then `UNKNOWN_VERSION`
 * listing each pinned version not registered (every start of that child would be refused).
 */
export function checkRegisteredChildren(
  byName: ReadonlyMap<string, ReadonlyMap<number, WorkflowDefinition>>,
): void {
  const unknown = lines(byName, (w) => (byName.has(w) ? undefined : w));
  if (unknown.length)
    throw new RegistryError(
      'UNKNOWN_WORKFLOW',
      `child workflows not registered:\n  - ${unknown.join('\n  - ')}`,
    );
  const unpinned = lines(byName, (w, pinned) =>
    pinned === undefined || byName.get(w)?.has(pinned) ? undefined : `${w} v${pinned}`,
  );
  if (unpinned.length)
    throw new RegistryError(
      'UNKNOWN_VERSION',
      `child workflow versions not registered:\n  - ${unpinned.join('\n  - ')}`,
    );
}
