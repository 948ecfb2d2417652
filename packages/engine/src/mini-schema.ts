// The engine's own schemas: the part of zod/mini's functional API its checks use (same names, same
// issues: codes, paths, order, and which issues stop later checks), written small for the edge
// bundle. Not a general validator: no async, no transforms, no defaults, no coercion.

import {
  aborted,
  type Check,
  type input,
  isObject,
  type LiteralSchema,
  type ObjectSchema,
  type OptionalSchema,
  type output,
  type Payload,
  type RawIssue,
  run,
  type Schema,
  type Shape,
  schema,
  type UnionSchema,
} from './mini-schema-core.js';

export type * from './mini-schema-core.js';
export { issueMessage } from './mini-schema-core.js';

/** A type check: `expected` when `ok` does not hold. */
const typed = <T>(expected: string, ok: (v: unknown) => boolean) =>
  schema<Schema<T>>((p) => {
    if (!ok(p.value)) p.issues.push({ code: 'invalid_type', expected, input: p.value });
  });

/** A string. */
export const string = () => typed<string>('string', (v) => typeof v === 'string');
/** A finite number. */
export const number = () =>
  schema<Schema<number>>((p) => {
    const v = p.value;
    if (typeof v === 'number' && Number.isFinite(v)) return;
    p.issues.push({
      code: 'invalid_type',
      expected: 'number',
      input: v,
      ...(typeof v === 'number' ? { received: String(v) } : {}),
    });
  });
/** A boolean. */
export const boolean = () => typed<boolean>('boolean', (v) => typeof v === 'boolean');
/** Anything (a required field still has to be present). */
export const unknown = () => schema<Schema<unknown>>(() => undefined);

/** One of the given values (compared with `===`, NaN excepted). */
export function literal<const T extends string | number | boolean | null>(
  value: T | readonly T[],
): LiteralSchema<T> {
  const values = (Array.isArray(value) ? value : [value]) as readonly T[];
  const set = new Set<unknown>(values);
  return schema(
    (p) => {
      if (!set.has(p.value)) p.issues.push({ code: 'invalid_value', values, input: p.value });
    },
    { values },
  );
}

/** `schema`, or `undefined`; an object's key with it may be absent. */
export function optional<S extends Schema<unknown>>(inner: S): OptionalSchema<S> {
  return schema((p) => (p.value === undefined ? p : run(inner, p)), { opt: true });
}

/** Any value `fn` accepts, typed `T`; a custom issue with `message` otherwise (it stops later checks). */
export function custom<T>(fn: (v: unknown) => boolean, message?: string): Schema<T> {
  return schema<Schema<T>>(() => undefined).check(refine(fn, { message, abort: true }) as Check<T>);
}

/** A check: a custom issue (with `message`) when `fn` refuses the value; `abort` stops later checks. */
export function refine<T>(
  fn: (v: T) => boolean,
  params?: string | { message?: string | undefined; abort?: boolean },
): Check<T> {
  const { message, abort } = typeof params === 'string' ? { message: params, abort: false } : (params ?? {});
  return {
    run: (p) => {
      if (!fn(p.value))
        p.issues.push({ code: 'custom', input: p.value, path: [], continue: !abort, message });
    },
  };
}

/** A check of its own: `run` pushes its issues onto the payload. */
export const check = <T>(run: (p: Payload & { value: T }) => void): Check<T> => ({ run });

const lengthOf = (v: unknown) => (v as { length: number }).length;
const hasLength = (p: Payload) => p.value != null && lengthOf(p.value) !== undefined;
/** Characters (code points) of a string, items of an array. */
const sizeOf = (v: unknown) => (typeof v === 'string' ? [...v].length : lengthOf(v));
const lengthOrigin = (v: unknown) =>
  Array.isArray(v) ? 'array' : typeof v === 'string' ? 'string' : 'unknown';

/** At least `min` long (a string in code points, an array in items). */
export const minLength = (minimum: number): Check<{ length: number }> => ({
  when: hasLength,
  len: true,
  run: (p) => {
    const v = p.value;
    if (lengthOf(v) >= minimum && sizeOf(v) >= minimum) return;
    p.issues.push({
      code: 'too_small',
      origin: lengthOrigin(v),
      minimum,
      inclusive: true,
      input: v,
      continue: true,
    });
  },
});
/** At most `max` long (a string in code points, an array in items). */
export const maxLength = (maximum: number): Check<{ length: number }> => ({
  when: hasLength,
  len: true,
  max: maximum,
  run: (p) => {
    const v = p.value;
    if (lengthOf(v) <= maximum || sizeOf(v) <= maximum) return;
    p.issues.push({
      code: 'too_big',
      origin: lengthOrigin(v),
      maximum,
      inclusive: true,
      input: v,
      continue: true,
    });
  },
});
/** At least `min` (inclusive). */
export const minimum = (min: number): Check<number> => ({
  run: (p) => {
    if (p.value >= min) return;
    p.issues.push({
      code: 'too_small',
      origin: 'number',
      minimum: min,
      inclusive: true,
      input: p.value,
      continue: true,
    });
  },
});
/** At most `max` (inclusive). */
export const maximum = (max: number): Check<number> => ({
  run: (p) => {
    if (p.value <= max) return;
    p.issues.push({
      code: 'too_big',
      origin: 'number',
      maximum: max,
      inclusive: true,
      input: p.value,
      continue: true,
    });
  },
});

/** Prefixes the issues of a field or item with its key. */
function nest(into: Payload, key: PropertyKey, issues: RawIssue[]): void {
  for (const i of issues) {
    i.path = [key, ...(i.path ?? [])];
    into.issues.push(i);
  }
}

/** Puts one field's result into the object's (an absent optional key stays absent). */
function field(r: Payload, into: Payload, key: string, input: object, opt: boolean): void {
  const present = key in input;
  if (!present && opt) return;
  if (r.issues.length) nest(into, key, r.issues);
  else if (!present)
    into.issues.push({ code: 'invalid_type', expected: 'nonoptional', input: undefined, path: [key] });
  if (!present) return;
  (into.value as Record<string, unknown>)[key] = r.value;
}

/**
 * An object of `shape`: each field parsed, in the shape's order; other keys dropped (`rest`
 * undefined), refused (`'strict'`: one `unrecognized_keys` issue), or parsed with `rest`.
 */
function objectOf<S extends Shape>(shape: S, rest?: Schema<unknown> | 'strict'): ObjectSchema<S> {
  const keys = Object.keys(shape);
  const known = new Set(keys);
  return schema(
    (p) => {
      const input = p.value;
      if (!isObject(input)) {
        p.issues.push({ code: 'invalid_type', expected: 'object', input });
        return;
      }
      p.value = {};
      for (const key of keys) {
        if (key === '__proto__') continue;
        const el = shape[key]!;
        field(run(el, { value: input[key], issues: [] }), p, key, input, el.opt === true);
      }
      if (!rest) return;
      const unknownKeys: string[] = [];
      for (const key in input) {
        if (known.has(key)) continue;
        if (rest === 'strict') unknownKeys.push(key);
        else if (key !== '__proto__')
          field(run(rest, { value: input[key], issues: [] }), p, key, input, rest.opt === true);
      }
      if (unknownKeys.length)
        p.issues.push({ code: 'unrecognized_keys', keys: unknownKeys, input, continue: true });
    },
    { shape },
  );
}

/** An object of `shape`, other keys dropped. */
export const object = <S extends Shape>(shape: S) => objectOf(shape);
/** An object of `shape`, other keys refused. */
export const strictObject = <S extends Shape>(shape: S) => objectOf(shape, 'strict');
/** `base`'s fields, and every other key parsed with `rest`. */
export function catchall<S extends Shape, R extends Schema<unknown>>(
  base: ObjectSchema<S>,
  rest: R,
): Schema<
  output<ObjectSchema<S>> & Record<string, output<R>>,
  input<ObjectSchema<S>> & Record<string, input<R>>
> {
  return objectOf(base.shape, rest) as never;
}

/** An array of `item`. */
export function array<S extends Schema<unknown>>(item: S): Schema<output<S>[], input<S>[]> {
  return schema(
    (p) => {
      const input = p.value;
      if (!Array.isArray(input)) {
        p.issues.push({ code: 'invalid_type', expected: 'array', input });
        return;
      }
      const out: unknown[] = Array(input.length);
      p.value = out;
      for (let i = 0; i < input.length; i++) {
        const r = run(item, { value: input[i], issues: [] });
        nest(p, i, r.issues);
        out[i] = r.value;
      }
    },
    { arr: true },
  );
}

/**
 * The first of `options` to accept the value; if none does but exactly one failed without an
 * issue that stops it, that one's issues; else one `invalid_union` issue.
 */
export function union<const L extends readonly Schema<unknown>[]>(options: L): UnionSchema<L> {
  return schema(
    (p) => {
      if (options.length === 1) return run(options[0]!, p);
      const results: Payload[] = [];
      for (const o of options) {
        const r = run(o, { value: p.value, issues: [] });
        if (!r.issues.length) {
          p.value = r.value;
          return p;
        }
        results.push(r);
      }
      const open = results.filter((r) => !aborted(r));
      if (open.length === 1) return open[0];
      p.issues.push({ code: 'invalid_union', input: p.value, errors: results.map((r) => r.issues) });
    },
    options.some((o) => o.opt) ? { opt: true } : undefined,
  );
}
