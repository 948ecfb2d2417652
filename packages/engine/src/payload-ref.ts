// What a snapshot keeps in place of a large value: a reference to a payload store's copy of it.
// The reducer treats it as opaque JSON; only the runner (and tools) put and resolve payloads.

/** The tag of a {@link PayloadRef}; a new layout of the reference gets a new tag. */
export const PAYLOAD_REF = 'stepfold/payload@1';

/**
 * A value stored in a {@link PayloadStore} instead of the snapshot: the instance it belongs to
 * (`owner`, the instance id; deleting the instance collects its payloads), the SHA-256 of the
 * value's JSON text (the payload's address within its owner, so a retried put stores nothing
 * twice), the JSON's UTF-8 size, and an optional small projection of the value (`keep`) that
 * conditions and other reducer-time paths can read.
 */
export interface PayloadRef {
  $ref: typeof PAYLOAD_REF;
  owner: string;
  /** Lowercase hex SHA-256 of the UTF-8 JSON text of the value. */
  sha256: string;
  /** UTF-8 bytes of that JSON text. */
  bytes: number;
  /** Top-level fields of the value kept inline (only where the step asks for them). */
  keep?: Record<string, unknown> | undefined;
}

/** True for a {@link PayloadRef} (by its tag and field types; the hash is checked on resolve). */
export function isPayloadRef(value: unknown): value is PayloadRef {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const r = value as Record<string, unknown>;
  return (
    r['$ref'] === PAYLOAD_REF &&
    typeof r['owner'] === 'string' &&
    typeof r['sha256'] === 'string' &&
    typeof r['bytes'] === 'number'
  );
}
