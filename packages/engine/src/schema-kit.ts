import { isValidId } from './ids.js';
import * as z from './mini-schema.js';

// The engine's schemas are `mini-schema.ts`: zod/mini's functional API, the part the engine uses.
// A set of values is a `z.literal([...])`.

/** A string of bounded length. */
export const text = (min: number, max: number) => z.string().check(z.minLength(min), z.maxLength(max));

/**
 * What `z.int()` checks, with its issues (not an integer: nothing else is checked; outside the
 * safe range: reported, then the bounds too).
 */
const safeInteger = z.check<number>((payload) => {
  const input = payload.value;
  const issue = !Number.isInteger(input)
    ? { code: 'invalid_type', expected: 'int', continue: false }
    : input > Number.MAX_SAFE_INTEGER
      ? { code: 'too_big', maximum: Number.MAX_SAFE_INTEGER, origin: 'int', inclusive: true, continue: true }
      : input < Number.MIN_SAFE_INTEGER
        ? {
            code: 'too_small',
            minimum: Number.MIN_SAFE_INTEGER,
            origin: 'int',
            inclusive: true,
            continue: true,
          }
        : undefined;
  if (issue) payload.issues.push({ ...issue, input } as never);
});

/** An integer within bounds. */
export const integer = (min: number, max: number) =>
  z.number().check(safeInteger, z.minimum(min), z.maximum(max));

/** A number within bounds. */
export const bounded = (min: number, max: number) => z.number().check(z.minimum(min), z.maximum(max));

/** An id, step id, handler or signal name. */
export const idString = z
  .string()
  .check(z.refine(isValidId, 'must be 1-200 characters of A-Z a-z 0-9 _ . : @ / + = -'));

/** Milliseconds: an integer from `min` up to ten years. */
export const millis = (min = 0) => integer(min, 10 * 365 * 24 * 3600 * 1000);

export { issueMessage } from './mini-schema.js';

/** Parses with readable messages (`issueMessage`), returning `{ path, message }` issues on failure. */
export function parseWith<T>(
  schema: z.Schema<T>,
  data: unknown,
): { ok: true; value: T } | { ok: false; issues: Array<{ path: string; message: string }> } {
  const r = schema.safeParse(data);
  if (r.success) return { ok: true, value: r.data };
  return {
    ok: false,
    issues: r.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
  };
}
