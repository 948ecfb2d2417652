// Type-level helpers of the typed builder: JSON round-tripping, data paths over `{ input, outputs }`,
// and schemas. Types only: nothing here exists at runtime.

/**
 * The type a value has after `JSON.parse(JSON.stringify(value))`, which is how every output and
 * payload is stored: a `Date` becomes a `string`, functions and `undefined` properties vanish.
 */
export type Jsonify<T> = T extends string | number | boolean | null
  ? T
  : T extends { toJSON(): infer J }
    ? unknown extends J
      ? unknown
      : Jsonify<J>
    : T extends undefined | ((...args: never[]) => unknown) | symbol | bigint
      ? never
      : T extends readonly (infer E)[]
        ? Array<[Jsonify<E>] extends [never] ? null : Jsonify<E>>
        : T extends object
          ? {
              [K in keyof T as K extends string
                ? [Jsonify<T[K]>] extends [never]
                  ? never
                  : K
                : never]: Jsonify<T[K]>;
            }
          : unknown;

type Depth = [never, 0, 1, 2, 3, 4, 5];

/**
 * Every dotted path into `T` below `Prefix`, five levels deep (arrays end a path). Where the
 * type is `unknown` (an undeclared input), any path below is allowed.
 */
export type PathsUnder<T, Prefix extends string, D extends number = 5> = [D] extends [never]
  ? Prefix
  : unknown extends T
    ? Prefix | `${Prefix}.${string}`
    : T extends readonly unknown[]
      ? Prefix
      : T extends object
        ?
            | Prefix
            | { [K in keyof T & string]-?: PathsUnder<T[K], `${Prefix}.${K}`, Depth[D]> }[keyof T & string]
        : Prefix;

/** The data a step can read: the workflow input and the outputs of earlier steps. */
export interface StepData<WI, O> {
  input: WI;
  outputs: O;
}

/** Every data path a step may read, given the workflow input `WI` and earlier outputs `O`. */
export type DataPath<WI, O> = PathsUnder<WI, 'input'> | PathsUnder<O, 'outputs'>;

type At<T, K extends string> = unknown extends T
  ? unknown
  : T extends readonly unknown[]
    ? undefined
    : T extends object
      ? K extends keyof T
        ? T[K]
        : undefined
      : undefined;

/** The type found at a dotted path of `T` (`| undefined` where a segment may be missing). */
export type PathValue<T, P extends string> = P extends `${infer Head}.${infer Rest}`
  ? PathValue<At<T, Head>, Rest>
  : At<T, P>;

/** What a mapping (a path, or an object of paths) produces from the data. */
export type Resolve<D, M> = M extends string
  ? PathValue<D, M>
  : { -readonly [K in keyof M]: M[K] extends string ? PathValue<D, M[K]> : never };

/**
 * A schema in the Standard Schema v1 shape, which zod (also `zod/mini`), valibot and arktype
 * implement. Only its `~standard.validate` is called, to check data at the boundary.
 */
export interface StandardSchema<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => SchemaResult<Output> | Promise<SchemaResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

/** The result of a Standard Schema's `validate`. */
export type SchemaResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | {
      readonly issues: ReadonlyArray<{
        readonly message: string;
        readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
      }>;
    };

/** The type a schema produces. */
export type InferSchema<S> = S extends StandardSchema<unknown, infer O> ? O : never;

/** `A` when it is assignable to `B`; otherwise an object naming both, which shows up in the compiler's message. */
export type Fits<A, B, Message extends string> = [A] extends [B]
  ? unknown
  : { error: Message; got: A; want: B };

/** A union turned into an intersection. */
export type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void
  ? I
  : never;

type Literal = string | number | boolean | null;
/** A condition operand whose `var` path is one of `P`. */
export type TypedOperand<P extends string> = Literal | readonly Literal[] | { readonly var: P };
type Pair<P extends string> = readonly [TypedOperand<P>, TypedOperand<P>];
/** A condition (see `Condition`) whose data paths are one of `P`: the typed builder's `choice` takes these. */
export type TypedCondition<P extends string> =
  | { readonly var: P }
  | { readonly exists: P }
  | { readonly '==': Pair<P> }
  | { readonly '!=': Pair<P> }
  | { readonly '<': Pair<P> }
  | { readonly '<=': Pair<P> }
  | { readonly '>': Pair<P> }
  | { readonly '>=': Pair<P> }
  | { readonly in: Pair<P> }
  | { readonly and: ReadonlyArray<TypedCondition<P>> }
  | { readonly or: ReadonlyArray<TypedCondition<P>> }
  | { readonly '!': TypedCondition<P> };
