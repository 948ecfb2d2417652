// The engine's own schemas: the part of zod/mini's functional API its checks use (same names, same
// issues: codes, paths, order, and which issues stop later checks), written small for the edge
// bundle. Not a general validator: no async, no transforms, no defaults, no coercion.

/** An issue as a schema raises it (the fields a message reads; `path` from the parsed root). */
export interface RawIssue {
  code: string;
  path?: PropertyKey[];
  input?: unknown;
  message?: string | undefined;
  /** `true`: later checks still run; anything else stops those that do not ask for the value's length. */
  continue?: boolean;
  expected?: string;
  received?: string;
  keys?: string[];
  minimum?: number;
  maximum?: number;
  inclusive?: boolean;
  origin?: string;
  values?: readonly unknown[];
  format?: string;
  errors?: RawIssue[][];
}

/** An issue as a failed parse reports it: its path from the root, and its message. */
export type Issue = Omit<RawIssue, 'input' | 'continue'> & { path: PropertyKey[]; message: string };

/** The value a schema parses and the issues raised so far. */
export interface Payload {
  value: unknown;
  issues: RawIssue[];
}

/** A check run after a schema's own parse (see {@link Schema.check}). */
export interface Check<T = unknown> {
  /** Checks that read a length run while no issue stopped them explicitly, if the value has a length. */
  readonly when?: (p: Payload) => boolean;
  /** A length check's cap: an array longer than it fails at once, its items unparsed. */
  readonly max?: number;
  readonly len?: true;
  readonly run: (p: Payload & { value: T }) => void;
}

/** What a parse answers. */
export type ParseResult<O> = { success: true; data: O } | { success: false; error: { issues: Issue[] } };

/** A schema: what it outputs (`O`) for what it accepts (`I`). */
export interface Schema<O = unknown, I = O> {
  /** The output type (never set: types only). */
  readonly _o: O;
  /** The input type (never set: types only). */
  readonly _i: I;
  /** Absence is accepted (an `optional`, or a union with one). */
  readonly opt?: true | undefined;
  /** An array schema: its leading length caps are checked before its items. */
  readonly arr?: true | undefined;
  /** Parses `p.value` into `p` (or the payload it answers). */
  readonly parse1: (p: Payload) => Payload;
  readonly checks: readonly Check[];
  /** The same schema with these checks run after its own (and its earlier checks). */
  check(...checks: Check<O>[]): this;
  /** Parses `data`; messages from {@link issueMessage} unless `error` gives one. */
  safeParse(data: unknown, params?: { error?: (issue: RawIssue) => string | undefined }): ParseResult<O>;
  /** Parses `data`, throwing a TypeError that lists the issues. */
  parse(data: unknown): O;
}

/** An object schema's fields. */
export type Shape = { readonly [key: string]: Schema<unknown> };
/** The output type of a schema (`infer` as zod spells it). */
export type output<S> = S extends Schema<infer O, unknown> ? O : never;
/** The input type of a schema. */
export type input<S> = S extends Schema<unknown, infer I> ? I : never;
export type { output as infer };

type OptKeys<S extends Shape> = { [K in keyof S]: S[K] extends { readonly opt: true } ? K : never }[keyof S];
type Flat<T> = { [K in keyof T]: T[K] } & {};
type Fields<S extends Shape, D extends 'o' | 'i'> = Flat<
  { -readonly [K in Exclude<keyof S, OptKeys<S>>]: D extends 'o' ? output<S[K]> : input<S[K]> } & {
    -readonly [K in OptKeys<S>]?: D extends 'o' ? output<S[K]> : input<S[K]>;
  }
>;
/** An object schema over `S` (its fields in `shape`). */
export interface ObjectSchema<S extends Shape> extends Schema<Fields<S, 'o'>, Fields<S, 'i'>> {
  readonly shape: S;
}
/** A literal schema: one of `values`. */
export interface LiteralSchema<T> extends Schema<T> {
  readonly values: readonly T[];
}
/** A union of schemas: the first that accepts the value. */
export type UnionSchema<L extends readonly Schema<unknown>[]> = Schema<output<L[number]>, input<L[number]>>;
/** An optional schema: `undefined` (or absence) too. */
export interface OptionalSchema<S extends Schema<unknown>>
  extends Schema<output<S> | undefined, input<S> | undefined> {
  readonly opt: true;
}

const aborted = (p: Payload) => p.issues.some((i) => i.continue !== true);
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Runs a schema: its own parse, then its checks (those stopped by an issue skipped). */
function run(s: Schema<unknown>, p: Payload): Payload {
  const v = p.value;
  // A too-long array fails its leading length caps before any item is parsed.
  if (s.arr && Array.isArray(v))
    for (const ch of s.checks) {
      if (!ch.len) break;
      if (ch.max !== undefined && v.length > ch.max) {
        ch.run(p);
        p.issues[p.issues.length - 1]!.continue = false;
        return p;
      }
    }
  const r = s.parse1(p);
  let stopped = aborted(r);
  for (const ch of s.checks) {
    if (ch.when) {
      if (r.issues.some((i) => i.continue === false) || !ch.when(r)) continue;
    } else if (stopped) continue;
    const n = r.issues.length;
    ch.run(r);
    if (r.issues.length > n && !stopped) stopped = aborted({ value: 0, issues: r.issues.slice(n) });
  }
  return r;
}

/** Readable messages for the issues schemas raise. */
export function issueMessage(issue: RawIssue): string {
  const long = issue.origin === 'string' || issue.origin === 'array' ? ' long' : '';
  const input = issue.input;
  switch (issue.code) {
    case 'invalid_type':
      // NaN and ±Infinity are numbers to `typeof`: "expected number, got number" would say nothing.
      return `expected ${issue.expected === 'number' ? 'a finite number' : issue.expected}, got ${input === null ? 'null' : Array.isArray(input) ? 'array' : typeof input === 'number' ? input : typeof input}`;
    case 'unrecognized_keys':
      return `unknown key${issue.keys!.length > 1 ? 's' : ''}: ${issue.keys!.join(', ')}`;
    case 'too_small':
      return `must be at least ${String(issue.minimum)}${long}`;
    case 'too_big':
      return `must be at most ${String(issue.maximum)}${long}`;
    case 'invalid_value':
      return `must be one of ${issue.values!.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_union':
      return 'does not match any allowed form';
    case 'invalid_format':
      return `invalid ${issue.format}`;
    default:
      return issue.message ?? 'invalid value';
  }
}

const methods = {
  check(this: Schema<unknown>, ...checks: Check[]) {
    return { ...this, checks: [...this.checks, ...checks] };
  },
  safeParse(
    this: Schema<unknown>,
    data: unknown,
    params?: { error?: (issue: RawIssue) => string | undefined },
  ): ParseResult<unknown> {
    const r = run(this, { value: data, issues: [] });
    if (!r.issues.length) return { success: true, data: r.value };
    const issues = r.issues.map(({ input: _, continue: __, ...i }, k) => ({
      ...i,
      path: i.path ?? [],
      message: i.message ?? params?.error?.(r.issues[k]!) ?? issueMessage(r.issues[k]!),
    }));
    return { success: false, error: { issues } };
  },
  parse(this: Schema<unknown>, data: unknown) {
    const r = this.safeParse(data);
    if (r.success) return r.data;
    throw new TypeError(r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  },
};

/** A schema from its own parse (and fields such as `shape`). */
function schema<S>(parse1: (p: Payload) => unknown, extra?: object): S {
  return {
    ...methods,
    checks: [],
    ...extra,
    // A parse answers the payload it filled: `p` unless it returns another (a union's option's).
    parse1: (p: Payload) => (parse1(p) as Payload | undefined) ?? p,
  } as S;
}

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
