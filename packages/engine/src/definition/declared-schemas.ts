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
  if (result.issues) {
    throw new ValidationError(
      'INVALID_INPUT',
      `${at} does not match its declared schema`,
      issuesOf(result, at),
    );
  }
  return result.value;
}
