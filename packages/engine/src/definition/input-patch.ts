import { ValidationError } from '../errors.js';
import { issuesOf } from './declared-schemas.js';
import type { SchemaResult, StandardSchema } from './typing.js';

// A requeue's `inputPatch`: how it merges into the workflow input (the reducer's rule), and its
// check against the declared input, which the runner and the harness give it before writing.

/** The input with `patch` merged in, shallowly: a copy, with the patch's own keys (even `__proto__`) as data. */
export function patchInput(input: unknown, patch: Record<string, unknown>): unknown {
  const out: Record<string, unknown> = {};
  const base = typeof input === 'object' && input !== null && !Array.isArray(input) ? input : {};
  for (const [k, v] of [...Object.entries(base), ...Object.entries(patch)]) {
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * The `INVALID_INPUT` error a patch earns when the patched input does not fit the declared schema,
 * or undefined. Only the patch's own fields (and the input as a whole) are held against it: a
 * stored field the schema would now read differently (a `Date` stored as a string) is not the
 * patch's doing, and must not keep an operator from requeuing.
 */
function patchRefusal(
  result: SchemaResult<unknown>,
  patch: Record<string, unknown>,
): ValidationError | undefined {
  const issues = issuesOf(result, 'inputPatch').filter((i) => {
    const field = i.path.split('.')[1];
    return field === undefined || Object.hasOwn(patch, field);
  });
  if (!issues.length) return undefined;
  return new ValidationError('INVALID_INPUT', 'inputPatch does not match the declared input', issues);
}

/** Throws `INVALID_INPUT` when `input` patched with `patch` does not fit `schema` (sync or async). */
export async function checkInputPatch(
  schema: StandardSchema,
  input: unknown,
  patch: Record<string, unknown>,
): Promise<void> {
  const problem = patchRefusal(await schema['~standard'].validate(patchInput(input, patch)), patch);
  if (problem) throw problem;
}

/**
 * {@link checkInputPatch} for a caller that cannot wait (the test harness): the error, or
 * undefined; a schema that validates asynchronously lets the patch through.
 */
export function inputPatchProblem(
  schema: StandardSchema,
  input: unknown,
  patch: Record<string, unknown>,
): ValidationError | undefined {
  const result = schema['~standard'].validate(patchInput(input, patch));
  return result instanceof Promise ? undefined : patchRefusal(result, patch);
}
