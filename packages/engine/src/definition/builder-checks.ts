import type { Issue } from '../errors.js';
import { kindOf } from './kinds/index.js';
import { suggest } from './references.js';
import type { StepDefinition } from './schema.js';
import type { StandardSchema } from './typing.js';

// Checks `build()` makes at run time of what the builder's types promise, for callers that bypass
// the types (casts, `any`, JavaScript): signal names against `.signal()`, and `input.*` paths
// against the declared input schema where the schema tells its keys.

type BuiltStep = StepDefinition & { id: string };

/**
 * Declared signals no step listens for, and (once any is declared) steps listening for a signal
 * that was not declared: a human step's own signal counts as declared, as in the builder's types.
 */
export function signalIssues(steps: readonly BuiltStep[], declared: Record<string, unknown>): Issue[] {
  const names = Object.keys(declared);
  const listened = new Set(steps.flatMap((s) => kindOf(s).listensFor?.(s) ?? []));
  const issues: Issue[] = names
    .filter((name) => !listened.has(name))
    .map((name) => ({
      path: `signals.${name}`,
      message: `signal "${name}" is declared but no step listens for it`,
    }));
  if (names.length === 0) return issues;
  const known = new Set([
    ...names,
    ...steps.filter((s) => s.kind === 'human').flatMap((s) => kindOf(s).listensFor?.(s) ?? []),
  ]);
  for (const s of steps) {
    const name = kindOf(s).listensFor?.(s);
    if (name === undefined || known.has(name)) continue;
    const hint = suggest(name, known);
    issues.push({
      path: `steps.${s.id}.signal`,
      message: `signal "${name}" is not declared with .signal()${hint ? ` (did you mean "${hint}"?)` : ''}`,
    });
  }
  return issues;
}

/**
 * Every `input.*` path some step reads (or the workflow reads: `also`, its limits' keys) that the
 * declared input schema cannot have.
 */
export function inputPathIssues(
  steps: readonly BuiltStep[],
  schema: StandardSchema,
  also: ReadonlyArray<{ path: string; at: string }> = [],
): Issue[] {
  const issues: Issue[] = [];
  const read = [...also, ...steps.flatMap((s) => kindOf(s).paths?.(s, `steps.${s.id}`) ?? [])];
  for (const { path, at } of read) {
    const [root, ...segments] = path.split('.');
    if (root !== 'input') continue;
    const problem = missingKey(schema, segments);
    if (problem) {
      const hint = suggest(problem.key, problem.keys);
      issues.push({
        path: at,
        message: `"${path}": the declared input has no "${problem.key}" there${hint ? ` (did you mean "${hint}"?)` : ''}`,
      });
    }
  }
  return issues;
}

/** The first segment a schema's known shape lacks, with the keys it has; undefined when fine or not known. */
function missingKey(
  schema: unknown,
  segments: readonly string[],
): { key: string; keys: string[] } | undefined {
  let current = schema;
  for (const key of segments) {
    const shape = shapeOf(current);
    if (!shape) return undefined;
    if (!Object.hasOwn(shape, key)) return { key, keys: Object.keys(shape) };
    current = shape[key];
  }
  return undefined;
}

type Def = Record<string, unknown>;

/**
 * The keys of the object a schema accepts when the schema says so and accepts no others: zod 4
 * (classic and mini) and valibot objects, seen through optional/nullable/default wrappers.
 * Anything else (other libraries, `type<T>()`, open objects) is not known: undefined.
 */
function shapeOf(schema: unknown, depth = 0): Record<string, unknown> | undefined {
  if (typeof schema !== 'object' || schema === null || depth > 8) return undefined;
  const zod = (schema as { _zod?: { def?: Def } })._zod?.def;
  if (zod) {
    if (zod['type'] === 'object') {
      const catchall = (zod['catchall'] as { _zod?: { def?: Def } } | undefined)?._zod?.def;
      if (catchall && catchall['type'] !== 'never') return undefined;
      return zod['shape'] as Record<string, unknown>;
    }
    const inner = zod['innerType'];
    return inner ? shapeOf(inner, depth + 1) : undefined;
  }
  const v = schema as { kind?: unknown; type?: unknown; entries?: unknown; wrapped?: unknown };
  if (v.kind === 'schema') {
    if ((v.type === 'object' || v.type === 'strict_object') && typeof v.entries === 'object')
      return v.entries as Record<string, unknown>;
    if (v.wrapped) return shapeOf(v.wrapped, depth + 1);
  }
  return undefined;
}
