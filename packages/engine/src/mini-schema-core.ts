// The core of the engine's schemas (`mini-schema.ts` holds the constructors): their types, how one
// runs (its parse, then its checks), the messages of their issues, and what every schema answers.

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

/** Whether an issue of `p` stops the checks that do not ask for the value's length. */
export const aborted = (p: Payload) => p.issues.some((i) => i.continue !== true);
/** A plain object to a schema: not null, not an array. */
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Runs a schema: its own parse, then its checks (those stopped by an issue skipped). */
export function run(s: Schema<unknown>, p: Payload): Payload {
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
export function schema<S>(parse1: (p: Payload) => unknown, extra?: object): S {
  return {
    ...methods,
    checks: [],
    ...extra,
    // A parse answers the payload it filled: `p` unless it returns another (a union's option's).
    parse1: (p: Payload) => (parse1(p) as Payload | undefined) ?? p,
  } as S;
}
