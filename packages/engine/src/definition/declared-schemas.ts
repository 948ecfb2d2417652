import { type Issue, ValidationError } from '../errors.js';
import type { SchemaResult, StandardSchema } from './typing.js';

/** Schemas a typed builder declared for a definition; kept beside the JSON, never in it. */
export interface DeclaredSchemas {
  /** The workflow input, checked by `start`. */
  input?: StandardSchema | undefined;
  /** Signal payloads by name, checked by `signal`. */
  signals: Record<string, StandardSchema>;
  /** Handler outputs by step id, checked when the handler returns. */
  outputs: Record<string, StandardSchema>;
}

const declared = new WeakMap<object, DeclaredSchemas>();

/** Records the schemas of a built definition (the builder calls this). */
export function declareSchemas(definition: object, schemas: DeclaredSchemas): void {
  declared.set(definition, schemas);
}

/** The schemas declared for a definition, if it was built with any. */
export function declaredSchemas(definition: object): DeclaredSchemas | undefined {
  return declared.get(definition);
}

/** A schema that accepts anything and only carries a type: `input(type<Order>())`. */
export function type<T>(): StandardSchema<T> {
  return { '~standard': { version: 1, vendor: 'stepfold', validate: (value) => ({ value: value as T }) } };
}

/** A schema result's issues as stepfold issues, each path prefixed with `at`. */
export function issuesOf(result: SchemaResult<unknown>, at: string): Issue[] {
  return (result.issues ?? []).map((i) => ({
    path: [at, ...(i.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p))].join('.'),
    message: i.message,
  }));
}

/** The problems a declared schema finds in `value` (sync or async); empty when it passes. */
export async function schemaIssues(schema: StandardSchema, value: unknown, at: string): Promise<Issue[]> {
  return issuesOf(await schema['~standard'].validate(value), at);
}

/**
 * Checks `value` against a declared schema (sync or async) and returns the schema's value.
 * Throws `INVALID_INPUT` (not retryable) listing every issue; `at` names what was checked.
 */
export async function checkDeclared(schema: StandardSchema, value: unknown, at: string): Promise<unknown> {
  const result = await schema['~standard'].validate(value);
  if (result.issues) throw refusalOf(result, at);
  return result.value;
}

/**
 * {@link checkDeclared} for a caller that cannot wait (the test harness, the reducer's side of a
 * tree): the `INVALID_INPUT` error it would throw, or undefined. A schema that validates
 * asynchronously cannot be asked without waiting: it passes here.
 */
export function declaredProblem(
  schema: StandardSchema,
  value: unknown,
  at: string,
): ValidationError | undefined {
  const result = schema['~standard'].validate(value);
  return result instanceof Promise || !result.issues ? undefined : refusalOf(result, at);
}

/** A check an event's data takes against a declared schema: the schema, the value, and what it is. */
export interface DeclaredCheck {
  schema: StandardSchema;
  value: unknown;
  /** `input` for a start's input, `signals.<name>` for a signal's data. */
  at: string;
}

/**
 * The check a runner gives an event's data before it writes it, for the test harness: a start's
 * input against the declared input schema, a signal's data (a human decision too) against its
 * signal's schema, named as the runner names them. None for other events, or when nothing is
 * declared. (The runner looks its two schemas up inline: this would cost its bundle a function.)
 */
export function declaredCheckOf(
  definition: object,
  event: { type: string; input?: unknown; name?: string; payload?: unknown },
): DeclaredCheck | undefined {
  const schemas = declaredSchemas(definition);
  if (event.type === 'start' && schemas?.input)
    return { schema: schemas.input, value: event.input, at: 'input' };
  const name = event.type === 'signal' ? event.name : undefined;
  if (name === undefined || !schemas || !Object.hasOwn(schemas.signals, name)) return undefined;
  return { schema: schemas.signals[name]!, value: event.payload, at: `signals.${name}` };
}

/** The `INVALID_INPUT` error of a schema's result with issues. */
function refusalOf(result: SchemaResult<unknown>, at: string): ValidationError {
  return new ValidationError(
    'INVALID_INPUT',
    `${at} does not match its declared schema`,
    issuesOf(result, at),
  );
}
