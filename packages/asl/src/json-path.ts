// JSONPath as Step Functions reads it: `$` (the state's data), `$$` (the context object) and
// `$name` (a variable), followed by `.name`, `['name']`, `[n]`, `[*]`, `.*`, `[a:b:c]`, `[i,j]`
// and `[?(@.field <op> literal)]`. A path with a wildcard, slice, union or filter is indefinite:
// it yields the list of what it matched (possibly empty), as AWS does.

/** One parsed step of a JSONPath. */
type Segment =
  | { t: 'name'; name: string }
  | { t: 'index'; index: number }
  | { t: 'all' }
  | { t: 'slice'; start?: number | undefined; end?: number | undefined; step?: number | undefined }
  | { t: 'union'; keys: Array<string | number> }
  | { t: 'filter'; path: Segment[]; op: string; value: unknown };

/** A parsed JSONPath: what it starts from and its segments. */
export interface ParsedPath {
  root: '$' | '$$' | 'var';
  /** The variable's name, for `root: 'var'`. */
  variable?: string | undefined;
  segments: Segment[];
  /** Whether it can match several values (wildcard, slice, union, filter). */
  indefinite: boolean;
}

/** A path that does not parse: the message says where. */
export class JsonPathSyntaxError extends Error {
  override readonly name = 'JsonPathSyntaxError';
}

const cache = new Map<string, ParsedPath>();

/** Parses a JSONPath (cached: definitions repeat theirs on every run). */
export function parsePath(path: string): ParsedPath {
  const hit = cache.get(path);
  if (hit) return hit;
  const parsed = parseUncached(path);
  if (cache.size > 5000) cache.clear();
  cache.set(path, parsed);
  return parsed;
}

function parseUncached(path: string): ParsedPath {
  let i = 0;
  let root: ParsedPath['root'];
  let variable: string | undefined;
  if (path.startsWith('$$')) {
    root = '$$';
    i = 2;
  } else if (path.startsWith('$') && /^[A-Za-z_]/.test(path.slice(1, 2))) {
    root = 'var';
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(path.slice(1))!;
    variable = m[0];
    i = 1 + m[0].length;
  } else if (path.startsWith('$')) {
    root = '$';
    i = 1;
  } else throw new JsonPathSyntaxError(`"${path}" does not start with $`);
  const { segments, end } = parseSegments(path, i, false);
  if (end !== path.length) throw new JsonPathSyntaxError(`"${path}": unexpected "${path.slice(end)}"`);
  const indefinite = segments.some(
    (s) => s.t === 'all' || s.t === 'slice' || s.t === 'union' || s.t === 'filter',
  );
  return { root, variable, segments, indefinite };
}

/** Parses segments from `i`; inside a filter it stops at the first operator or `)`. */
function parseSegments(path: string, start: number, inFilter: boolean): { segments: Segment[]; end: number } {
  const segments: Segment[] = [];
  let i = start;
  while (i < path.length) {
    const c = path[i];
    if (c === '.') {
      if (path[i + 1] === '.') throw new JsonPathSyntaxError(`"${path}": deep scan (..) is not supported`);
      if (path[i + 1] === '*') {
        segments.push({ t: 'all' });
        i += 2;
        continue;
      }
      let j = i + 1;
      while (j < path.length && !'.['.includes(path[j]!) && !(inFilter && ' =!<>)'.includes(path[j]!))) j++;
      if (j === i + 1) throw new JsonPathSyntaxError(`"${path}": empty name at ${i}`);
      segments.push({ t: 'name', name: path.slice(i + 1, j) });
      i = j;
    } else if (c === '[') {
      const close = bracketEnd(path, i);
      segments.push(parseBracket(path, path.slice(i + 1, close).trim()));
      i = close + 1;
    } else if (inFilter) break;
    else throw new JsonPathSyntaxError(`"${path}": unexpected "${c}" at ${i}`);
  }
  return { segments, end: i };
}

/** The index of the `]` closing the bracket opened at `open`, skipping quoted text and parentheses. */
function bracketEnd(path: string, open: number): number {
  let quote: string | null = null;
  let depth = 0;
  for (let i = open + 1; i < path.length; i++) {
    const c = path[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ']' && depth === 0) return i;
  }
  throw new JsonPathSyntaxError(`"${path}": unclosed [`);
}

function parseBracket(path: string, body: string): Segment {
  if (body === '*') return { t: 'all' };
  if (body.startsWith('?(') && body.endsWith(')')) return parseFilter(path, body.slice(2, -1).trim());
  const parts = splitTop(body, ',');
  if (parts.length > 1) return { t: 'union', keys: parts.map((p) => key(path, p.trim())) };
  if (/^-?\d*:-?\d*(:-?\d*)?$/.test(body)) {
    const [a, b, c] = body.split(':').map((x) => (x === '' || x === undefined ? undefined : Number(x)));
    return { t: 'slice', start: a, end: b, step: c };
  }
  const k = key(path, body);
  return typeof k === 'number' ? { t: 'index', index: k } : { t: 'name', name: k };
}

function key(path: string, text: string): string | number {
  if (/^-?\d+$/.test(text)) return Number(text);
  if ((text.startsWith("'") && text.endsWith("'")) || (text.startsWith('"') && text.endsWith('"')))
    // Only an escaped quote of the kind that delimits the name is unescaped; other backslashes stay.
    return text.slice(1, -1).split(`\\${text[0]}`).join(text[0]);
  throw new JsonPathSyntaxError(`"${path}": bad bracket "${text}"`);
}

/** Splits on `sep` outside quotes. */
function splitTop(text: string, sep: string): string[] {
  const out: string[] = [];
  let quote: string | null = null;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === sep) {
      out.push(text.slice(from, i));
      from = i + 1;
    }
  }
  out.push(text.slice(from));
  return out;
}

function parseFilter(path: string, body: string): Segment {
  if (!body.startsWith('@')) throw new JsonPathSyntaxError(`"${path}": filter must start with @`);
  const { segments, end } = parseSegments(body, 1, true);
  const rest = body.slice(end).trim();
  const m = /^(==|!=|<=|>=|<|>)\s*(.+)$/.exec(rest);
  if (!m) {
    if (rest === '') return { t: 'filter', path: segments, op: 'exists', value: null };
    throw new JsonPathSyntaxError(`"${path}": unsupported filter "${body}"`);
  }
  let value: unknown;
  const lit = m[2]!.trim();
  if (lit.startsWith("'") && lit.endsWith("'")) value = lit.slice(1, -1);
  else {
    try {
      value = JSON.parse(lit);
    } catch {
      throw new JsonPathSyntaxError(`"${path}": unsupported filter value "${lit}"`);
    }
  }
  return { t: 'filter', path: segments, op: m[1]!, value };
}

/** Where a path reads from: the state's data, the context object and the variables. */
export interface PathScope {
  data: unknown;
  context?: unknown;
  variables?: Readonly<Record<string, unknown>> | undefined;
}

/** The outcome of reading a path: its value, or that a definite path found nothing. */
export type PathRead = { found: true; value: unknown } | { found: false; missing: string };

/** Reads `path` in `scope`: a definite path's value, or an indefinite path's list of matches. */
export function readJsonPath(path: string, scope: PathScope): PathRead {
  const p = parsePath(path);
  let root: unknown;
  if (p.root === '$') root = scope.data;
  else if (p.root === '$$') root = scope.context;
  else {
    const vars = scope.variables ?? {};
    if (!Object.hasOwn(vars, p.variable!)) return { found: false, missing: `$${p.variable}` };
    root = vars[p.variable!];
  }
  if (!p.indefinite) {
    let cur = root;
    let at = p.root === 'var' ? `$${p.variable}` : '$';
    for (const s of p.segments) {
      const k = s.t === 'name' ? s.name : (s as { index: number }).index;
      at += typeof k === 'number' ? `[${k}]` : `['${k}']`;
      const next = child(cur, k);
      if (next === undefined) return { found: false, missing: at };
      cur = next;
    }
    return { found: true, value: cur };
  }
  let nodes: unknown[] = [root];
  for (const s of p.segments) nodes = nodes.flatMap((n) => apply(s, n));
  return { found: true, value: nodes };
}

function child(node: unknown, k: string | number): unknown {
  if (typeof k === 'number') {
    if (!Array.isArray(node)) return undefined;
    return node[k < 0 ? node.length + k : k];
  }
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
  return Object.hasOwn(node, k) ? (node as Record<string, unknown>)[k] : undefined;
}

function apply(s: Segment, node: unknown): unknown[] {
  switch (s.t) {
    case 'name':
    case 'index': {
      const v = child(node, s.t === 'name' ? s.name : s.index);
      return v === undefined ? [] : [v];
    }
    case 'all':
      if (Array.isArray(node)) return node;
      return node !== null && typeof node === 'object' ? Object.values(node) : [];
    case 'union':
      return s.keys.flatMap((k) => {
        const v = child(node, k);
        return v === undefined ? [] : [v];
      });
    case 'slice': {
      if (!Array.isArray(node)) return [];
      const n = node.length;
      const norm = (x: number | undefined, d: number) =>
        x === undefined ? d : x < 0 ? Math.max(0, n + x) : Math.min(n, x);
      const step = s.step ?? 1;
      const out: unknown[] = [];
      for (let i = norm(s.start, 0); i < norm(s.end, n); i += step) out.push(node[i]);
      return out;
    }
    case 'filter': {
      const items = Array.isArray(node)
        ? node
        : node !== null && typeof node === 'object'
          ? Object.values(node)
          : [];
      return items.filter((item) => {
        let cur: unknown = item;
        for (const seg of s.path) {
          cur = child(cur, seg.t === 'name' ? seg.name : (seg as { index: number }).index);
          if (cur === undefined) return false;
        }
        if (s.op === 'exists') return true;
        return compareFilter(cur, s.op, s.value);
      });
    }
  }
}

function compareFilter(a: unknown, op: string, b: unknown): boolean {
  if (op === '==') return JSON.stringify(a) === JSON.stringify(b);
  if (op === '!=') return JSON.stringify(a) !== JSON.stringify(b);
  if (typeof a !== typeof b || (typeof a !== 'number' && typeof a !== 'string')) return false;
  const x = a as number | string;
  const y = b as number | string;
  return op === '<' ? x < y : op === '<=' ? x <= y : op === '>' ? x > y : x >= y;
}

/**
 * Writes `value` at a ResultPath (`$`, `$.a.b`, `$['a']`) into a copy of `target`, creating the
 * objects on the way; `null` for `path` is handled by the caller.
 */
export function writeJsonPath(
  target: unknown,
  path: string,
  value: unknown,
): { ok: true; value: unknown } | { ok: false } {
  const p = parsePath(path);
  if (p.root !== '$' || p.indefinite) return { ok: false };
  if (p.segments.length === 0) return { ok: true, value };
  const write = (node: unknown, i: number): { ok: true; value: unknown } | { ok: false } => {
    const s = p.segments[i]!;
    if (s.t === 'index') {
      if (!Array.isArray(node)) return { ok: false };
      const copy = node.slice();
      const r = i + 1 === p.segments.length ? { ok: true as const, value } : write(copy[s.index], i + 1);
      if (!r.ok) return r;
      copy[s.index] = r.value;
      return { ok: true, value: copy };
    }
    if (s.t !== 'name') return { ok: false };
    const base =
      node !== null && typeof node === 'object' && !Array.isArray(node)
        ? (node as Record<string, unknown>)
        : null;
    if (base === null && node !== undefined) return { ok: false };
    const copy: Record<string, unknown> = { ...(base ?? {}) };
    const r = i + 1 === p.segments.length ? { ok: true as const, value } : write(copy[s.name], i + 1);
    if (!r.ok) return r;
    Object.defineProperty(copy, s.name, {
      value: r.value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
    return { ok: true, value: copy };
  };
  return write(target, 0);
}
