import {
  assertValidId,
  type Snapshot,
  SnapshotTooLargeError,
  snapshotBytes,
  ValidationError,
} from '@stepfold/engine';

const INT8_MAX = 2n ** 63n - 1n;
const INT8_MIN = -(2n ** 63n);

/** `x` as a decimal bigint literal, clamped to PostgreSQL's `bigint` range (infinities included). */
export function toInt8(x: bigint | number): string {
  if (typeof x === 'number' && Number.isSafeInteger(x)) return String(x); // the common case, no BigInt
  let n: bigint;
  if (typeof x === 'bigint') n = x;
  else if (x === Number.POSITIVE_INFINITY) n = INT8_MAX;
  else if (x === Number.NEGATIVE_INFINITY) n = INT8_MIN;
  else n = BigInt(x);
  return String(n > INT8_MAX ? INT8_MAX : n < INT8_MIN ? INT8_MIN : n);
}

// JSON.stringify writes NUL as \u0000 and a lone surrogate as \ud800-\udfff; JSONB refuses both.
// (A literal backslash followed by "u0000" also matches: harmless, that snapshot goes to the text column.)
const JSONB_REFUSES = /\\u(?:0000|d[89a-f])/;

/** True when JSONB cannot hold this JSON text, so it must be stored verbatim in `snapshot_text`. */
export function needsTextColumn(json: string): boolean {
  return json.includes('\\u') && JSONB_REFUSES.test(json);
}

/** The column values of one snapshot, validated and serialized before anything reaches the server. */
export interface EncodedRow {
  id: string;
  version: number;
  status: string;
  workflow: string;
  /** Whole milliseconds, rounded up: a fractional `wakeAt` is never reported due early. */
  wakeAt: string | null;
  json: string;
  /** Whether `json` goes to `snapshot_text` instead of the JSONB column. */
  asText: boolean;
}

/** Validates ids and size, then serializes; throws before any query on bad input. */
export function encodeSnapshot(snapshot: Snapshot, maxSnapshotBytes: number): EncodedRow {
  assertValidId(snapshot.id);
  assertValidId(snapshot.workflow?.name, 'workflow');
  if (!Number.isSafeInteger(snapshot.version)) {
    throw new ValidationError('INVALID_SNAPSHOT', `snapshot ${JSON.stringify(snapshot.id)}: bad version`, [
      { path: 'version', message: 'must be a safe integer' },
    ]);
  }
  const json = JSON.stringify(snapshot);
  // A UTF-16 unit is at most 3 UTF-8 bytes: short JSON cannot reach the limit, so skip the count.
  if (json.length * 3 > maxSnapshotBytes) {
    const bytes = snapshotBytes(json);
    if (bytes > maxSnapshotBytes) throw new SnapshotTooLargeError(snapshot.id, bytes, maxSnapshotBytes);
  }
  const wake = snapshot.wakeAt;
  return {
    id: snapshot.id,
    version: snapshot.version,
    status: String(snapshot.status),
    workflow: snapshot.workflow.name,
    // JSON has no NaN or Infinity: index what `load` will give back (null).
    wakeAt: typeof wake === 'number' && Number.isFinite(wake) ? toInt8(Math.ceil(wake)) : null,
    json,
    asText: needsTextColumn(json),
  };
}

/** The stored JSON text back as a snapshot. */
export function decodeSnapshot(json: string): Snapshot {
  return JSON.parse(json) as Snapshot;
}
