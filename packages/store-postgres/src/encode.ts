import type { EncodedSnapshot } from '@stepfold/engine';

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

/** The column values of one snapshot, as the statements bind them. */
export interface Row {
  id: string;
  version: number;
  status: string;
  workflow: string;
  /** Whole milliseconds, rounded up: a fractional `wakeAt` is never reported due early. */
  wakeAt: string | null;
  /** `name@version@hash`: what the inbox's `accept` lists. */
  definition: string;
  /** The fairness key the due order rotates over, `''` for none (see `Store.listDue`). */
  fairKey: string;
  /** The search attributes' JSON (the `search` column, which a trigger copies into `$search`), or null. */
  search: string | null;
  json: string;
  /** Whether `json` goes to `snapshot_text` instead of the JSONB column. */
  asText: boolean;
}

/** The row of an encoded snapshot; with `jsonb` false every snapshot goes to `snapshot_text`. */
export function toRow(e: EncodedSnapshot, jsonb = true): Row {
  return {
    id: e.id,
    version: e.version,
    status: e.status,
    workflow: e.workflow,
    wakeAt: e.wakeAt === null ? null : toInt8(Math.ceil(e.wakeAt)),
    definition: e.definition,
    fairKey: e.fairKey ?? '',
    search: e.search === null ? null : JSON.stringify(e.search),
    json: e.json,
    asText: !jsonb || needsTextColumn(e.json),
  };
}
