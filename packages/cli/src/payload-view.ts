import {
  isPayloadRef,
  isStepfoldError,
  type PayloadRef,
  type PayloadStore,
  resolvePayloads,
  type SealingCodec,
} from '@stepfold/engine';

// How the CLI prints offloaded values: a reference stays a reference (one short line saying what it
// holds) unless the command is asked to `--resolve`, which fetches the bodies from the payload store.

/** A size for people, in decimal units (`2.1 MB`), as `bytes` counts UTF-8 bytes of JSON. */
export function humanBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ['kB', 'MB', 'GB'];
  let n = bytes / 1000;
  let i = 0;
  while (n >= 1000 && i < units.length - 1) {
    n /= 1000;
    i++;
  }
  return `${n >= 100 ? Math.round(n) : n.toFixed(1)} ${units[i]}`;
}

/** A reference in one line: `‹payload 2.1 MB sha 1a2b3c4d… keep {status: "ok"}›`. */
export function describeRef(ref: PayloadRef): string {
  const keep = ref.keep && Object.keys(ref.keep).length ? ` keep ${keepText(ref.keep)}` : '';
  return `‹payload ${humanBytes(ref.bytes)} sha ${ref.sha256.slice(0, 8)}…${keep}›`;
}

/** Kept fields as `{status: "ok", count: 3}`: bare keys when they are plain names, JSON values. */
function keepText(keep: Record<string, unknown>): string {
  const fields = Object.entries(keep).map(
    ([k, v]) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k)}: ${compactJson(v)}`,
  );
  return `{${fields.join(', ')}}`;
}

/** `value` as compact JSON, with each payload reference printed as {@link describeRef} says. */
export function compactJson(value: unknown): string {
  if (value === undefined) return '-';
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null';
  if (isPayloadRef(value)) return describeRef(value);
  if (Array.isArray(value))
    return `[${value.map((v) => (v === undefined ? 'null' : compactJson(v))).join(',')}]`;
  const fields: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    if (v !== undefined && typeof v !== 'function') fields.push(`${JSON.stringify(k)}:${compactJson(v)}`);
  }
  return `{${fields.join(',')}}`;
}

/** Where a reference sits in a value (`steps.fetch.output`) and the reference. */
export interface RefAt {
  path: string;
  ref: PayloadRef;
}

/** Every reference in `value` with its path (depth first; a reference's own fields are not searched). */
export function refsWithPaths(value: unknown, path = '', out: RefAt[] = []): RefAt[] {
  if (typeof value !== 'object' || value === null) return out;
  if (isPayloadRef(value)) {
    out.push({ path, ref: value });
    return out;
  }
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  for (const [k, v] of entries) refsWithPaths(v, path ? `${path}.${k}` : k, out);
  return out;
}

/** The lines `show` adds for the references in a snapshot (none when it holds none). */
export function renderRefs(refs: readonly RefAt[], resolved: boolean): string[] {
  if (!refs.length) return [];
  // The workflow's output is often a step's: one payload, two references.
  const distinct = new Map(refs.map((r) => [`${r.ref.owner}\n${r.ref.sha256}`, r.ref.bytes]));
  const total = [...distinct.values()].reduce((n, b) => n + b, 0);
  const where = refs.length > distinct.size ? ` in ${refs.length} places` : '';
  const head = `payloads: ${distinct.size} offloaded (${humanBytes(total)})${where}${
    resolved ? ', resolved above; all of them: --json --resolve' : '; fetch them with --resolve'
  }`;
  return [head, ...refs.map((r) => `  ${r.path}  ${describeRef(r.ref)}`)];
}

/**
 * `value` with every reference replaced by its value, fetched from `payloads` (one fetch per
 * payload); a missing or corrupt body is `PAYLOAD_NOT_FOUND` naming where the reference sits.
 */
export async function resolveAll<T>(
  value: T,
  payloads: PayloadStore,
  what: string,
  codec?: SealingCodec | undefined,
): Promise<T> {
  try {
    return await resolvePayloads(value, payloads, codec);
  } catch (e) {
    if (isStepfoldError(e, 'PAYLOAD_NOT_FOUND')) {
      const owner = (e as { owner?: string }).owner;
      const sha = (e as { sha256?: string }).sha256;
      const at = refsWithPaths(value).find((r) => r.ref.owner === owner && r.ref.sha256 === sha);
      // The engine's error kept (code, class, kind), its message told where the reference is.
      e.message = `${e.message}: ${what}${at ? ` at ${at.path}` : ''} refers to it, but it is missing or fails its hash (deleted, or a different payload store?)`;
    }
    throw e;
  }
}
