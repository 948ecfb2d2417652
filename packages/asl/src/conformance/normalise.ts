// The corpus's normalisation rules, applied to what the engine produced before comparing it with
// what AWS recorded: per-run masks, N1 (ISO date-times become `date`), N2 (values of `timestamp`
// keys), N3 (JSON quoted in a runtime error's cause) and N4 (event ids in causes).

/** The ISO-8601 date-time pattern of rule N1. */
const ISO =
  /(?:[1-9]\d{3}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)|(?:[1-9]\d(?:0[48]|[2468][048]|[13579][26])|(?:[2468][048]|[13579][26])00)-02-29)T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?(?:Z|[+-][01]\d:?([0-5]\d)?)/g;

/** A per-run mask: every occurrence of `literal` in a string becomes `placeholder`. */
export interface Mask {
  literal: string;
  placeholder: string;
}

/** Rewrites a JSON value as the recorder did: masks first, then N1 and N2 (always). */
export function normaliseValue(value: unknown, masks: readonly Mask[] = []): unknown {
  if (typeof value === 'string') return normaliseString(value, masks);
  if (Array.isArray(value)) return value.map((v) => normaliseValue(v, masks));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const n = normaliseValue(v, masks);
    const keep = typeof v === 'string' && new RegExp(`^${ISO.source}`).test(v);
    Object.defineProperty(out, k, {
      value: /timestamp/i.test(k) && !keep ? 'timestamp' : n,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

function normaliseString(text: string, masks: readonly Mask[]): string {
  let s = text;
  for (const m of masks) s = s.split(m.literal).join(m.placeholder);
  return s.replace(ISO, 'date');
}

/** Rewrites an error cause: masks and N1, then N3 and N4 when the run lists them. */
export function normaliseCause(cause: string, rules: readonly string[], masks: readonly Mask[] = []): string {
  let s = normaliseString(cause, masks);
  if (rules.includes('N3')) {
    const m = /^.*'(\{.*\})'/.exec(s);
    if (m) {
      try {
        JSON.parse(m[1]!);
        const at = m.index + m[0].length - m[1]!.length - 1;
        s = `${s.slice(0, at)}<json-input:1>${s.slice(at + m[1]!.length)}`;
      } catch {
        // Not JSON: the recorder left it as it was.
      }
    }
  }
  if (rules.includes('N4')) s = s.replace(/event id #\d+/g, 'event id #N');
  return s;
}

/** Deep equality of JSON values, ignoring key order. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const y = b as unknown[];
    return a.length === y.length && a.every((v, i) => sameJson(v, y[i]));
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const kx = Object.keys(x);
  if (kx.length !== Object.keys(y).length) return false;
  return kx.every((k) => Object.hasOwn(y, k) && sameJson(x[k], y[k]));
}
