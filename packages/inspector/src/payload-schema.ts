import { type StandardSchema, ValidationError } from '@stepfold/engine';

// A signal's declared schema is a Standard Schema; the inspector only reads what it exposes: its
// `validate`, and a JSON Schema when the vendor offers Standard JSON Schema (zod 4 does, as
// `~standard.jsonSchema.input`). Other vendors' schemas still validate; the form then shows no shape.

type Json = Record<string, unknown>;
type JsonSchemaSource = { input?: (options: { target: string }) => unknown };

/** The JSON Schema of a payload schema, when its vendor can say it; undefined otherwise. */
export function jsonSchemaOf(schema: StandardSchema | undefined): Json | undefined {
  const source = (schema?.['~standard'] as { jsonSchema?: JsonSchemaSource } | undefined)?.jsonSchema;
  if (typeof source?.input !== 'function') return undefined;
  try {
    const out = source.input({ target: 'draft-2020-12' });
    if (typeof out !== 'object' || out === null) return undefined;
    const { $schema: _drop, ...rest } = out as Json;
    return rest;
  } catch {
    // A schema the vendor cannot express (a transform, a custom check) still validates.
    return undefined;
  }
}

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const key = (k: string) => (/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k));

/**
 * A one-line, TypeScript-like reading of a JSON Schema for the form's hint:
 * `{ amount: integer > 0, note?: string, kind: "a" | "b" }`. Depth-limited, so it stays one line.
 */
export function compactSchema(s: unknown, depth = 0): string {
  if (!isObj(s)) return s === false ? 'never' : 'any';
  if (depth > 3) return '…';
  if (Array.isArray(s['enum'])) return s['enum'].map((v) => JSON.stringify(v)).join(' | ');
  if ('const' in s) return JSON.stringify(s['const']);
  for (const union of ['anyOf', 'oneOf'] as const) {
    const members = s[union];
    if (Array.isArray(members)) return members.map((m) => compactSchema(m, depth + 1)).join(' | ');
  }
  const type = s['type'];
  if (Array.isArray(type)) return type.map((t) => compactSchema({ ...s, type: t }, depth)).join(' | ');
  if (type === 'object' || isObj(s['properties'])) {
    const props = isObj(s['properties']) ? s['properties'] : {};
    const required = new Set(Array.isArray(s['required']) ? s['required'] : []);
    const fields = Object.entries(props).map(
      ([k, v]) => `${key(k)}${required.has(k) ? '' : '?'}: ${compactSchema(v, depth + 1)}`,
    );
    if (isObj(s['additionalProperties']))
      fields.push(`[key]: ${compactSchema(s['additionalProperties'], depth + 1)}`);
    return fields.length ? `{ ${fields.join(', ')} }` : 'object';
  }
  if (type === 'array') {
    const item = compactSchema(s['items'], depth + 1);
    return item.includes(' ') ? `(${item})[]` : `${item}[]`;
  }
  if (typeof type === 'string') {
    const bounds: string[] = [];
    if (typeof s['minimum'] === 'number') bounds.push(`≥ ${s['minimum']}`);
    if (typeof s['exclusiveMinimum'] === 'number') bounds.push(`> ${s['exclusiveMinimum']}`);
    // zod writes Number.MAX_SAFE_INTEGER as an integer's maximum: noise, not a rule anyone set.
    if (typeof s['maximum'] === 'number' && s['maximum'] !== Number.MAX_SAFE_INTEGER)
      bounds.push(`≤ ${s['maximum']}`);
    if (typeof s['exclusiveMaximum'] === 'number') bounds.push(`< ${s['exclusiveMaximum']}`);
    if (typeof s['minLength'] === 'number' && s['minLength'] > 0) bounds.push(`length ≥ ${s['minLength']}`);
    if (typeof s['format'] === 'string') bounds.push(s['format']);
    return [type, ...bounds].join(' ');
  }
  return 'any';
}

/**
 * Checks a signal payload against its declared schema before anything is written; throws
 * `INVALID_EVENT` (a 400 page) listing every issue with its path in the payload.
 */
export async function checkPayload(name: string, schema: StandardSchema, payload: unknown): Promise<void> {
  const result = await schema['~standard'].validate(payload);
  if (!result.issues) return;
  const issues = result.issues.map((i) => {
    const path = (i.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p));
    return { path: ['payload', ...path].join('.'), message: i.message };
  });
  throw new ValidationError(
    'INVALID_EVENT',
    `the payload does not match what signal ${name} declares; nothing was sent`,
    issues,
  );
}
