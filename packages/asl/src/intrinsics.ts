import { AslRuntimeError } from './errors.js';
import { type PathScope, readJsonPath } from './json-path.js';

// Step Functions' intrinsic functions (`States.Format(...)` and the rest) in a `.$` field: parsed
// into a small tree once, then evaluated against the state's data, the context and the variables.

/** An argument of an intrinsic call. */
type Arg =
  | { t: 'lit'; value: unknown }
  | { t: 'path'; path: string }
  | { t: 'call'; name: string; args: Arg[] };

/** The intrinsic functions this importer evaluates. */
export const INTRINSICS = [
  'States.Format',
  'States.StringToJson',
  'States.JsonToString',
  'States.Array',
  'States.ArrayPartition',
  'States.ArrayContains',
  'States.ArrayRange',
  'States.ArrayGetItem',
  'States.ArrayLength',
  'States.ArrayUnique',
  'States.Base64Encode',
  'States.Base64Decode',
  'States.Hash',
  'States.JsonMerge',
  'States.MathAdd',
  'States.StringSplit',
] as const;

/** Whether a `.$` value is an intrinsic call rather than a path. */
export function isIntrinsic(text: string): boolean {
  return /^States\.[A-Za-z0-9]+\s*\(/.test(text);
}

/** A call that does not parse, or names a function not supported: the message says which. */
export class IntrinsicSyntaxError extends Error {
  override readonly name = 'IntrinsicSyntaxError';
}

const cache = new Map<string, Arg>();

/** Parses an intrinsic call (cached), throwing {@link IntrinsicSyntaxError}. */
export function parseIntrinsic(text: string): Arg {
  const hit = cache.get(text);
  if (hit) return hit;
  const p = { s: text, i: 0 };
  const call = parseArg(p);
  skipSpace(p);
  if (call.t !== 'call' || p.i !== text.length)
    throw new IntrinsicSyntaxError(`"${text}" is not one intrinsic function call`);
  if (cache.size > 5000) cache.clear();
  cache.set(text, call);
  return call;
}

function skipSpace(p: { s: string; i: number }): void {
  while (p.i < p.s.length && /\s/.test(p.s[p.i]!)) p.i++;
}

function parseArg(p: { s: string; i: number }): Arg {
  skipSpace(p);
  const rest = p.s.slice(p.i);
  if (rest.startsWith("'")) {
    let out = '';
    let i = p.i + 1;
    for (; i < p.s.length && p.s[i] !== "'"; i++) {
      // \' and \\ stand for the character; \{ and \} stay for Format; any other backslash is kept.
      if (p.s[i] === '\\' && i + 1 < p.s.length) {
        const next = p.s[i + 1]!;
        if (next === "'" || next === '\\') {
          out += next;
          i++;
        } else out += '\\';
      } else out += p.s[i];
    }
    if (i >= p.s.length) throw new IntrinsicSyntaxError(`unclosed string in "${p.s}"`);
    p.i = i + 1;
    return { t: 'lit', value: out };
  }
  const call = /^(States\.[A-Za-z0-9]+)\s*\(/.exec(rest);
  if (call) {
    const name = call[1]!;
    if (!(INTRINSICS as readonly string[]).includes(name))
      throw new IntrinsicSyntaxError(`${name} is not supported`);
    p.i += call[0].length;
    const args: Arg[] = [];
    skipSpace(p);
    if (p.s[p.i] === ')') p.i++;
    else {
      for (;;) {
        args.push(parseArg(p));
        skipSpace(p);
        const c = p.s[p.i++];
        if (c === ')') break;
        if (c !== ',') throw new IntrinsicSyntaxError(`expected , or ) in "${p.s}"`);
      }
    }
    return { t: 'call', name, args };
  }
  if (rest.startsWith('$')) {
    // A path runs to the next top-level , or ) (brackets may hold either).
    let depth = 0;
    let i = p.i;
    let quote: string | null = null;
    for (; i < p.s.length; i++) {
      const c = p.s[i]!;
      if (quote) {
        if (c === quote) quote = null;
      } else if (c === "'" || c === '"') quote = c;
      else if (c === '[' || c === '(') depth++;
      else if (c === ']' || (c === ')' && depth > 0)) depth--;
      else if ((c === ',' || c === ')') && depth === 0) break;
    }
    const path = p.s.slice(p.i, i).trim();
    p.i = i;
    return { t: 'path', path };
  }
  const lit = /^(-?\d+(\.\d+)?([eE][-+]?\d+)?|true|false|null)/.exec(rest);
  if (lit) {
    p.i += lit[0].length;
    return { t: 'lit', value: JSON.parse(lit[0]) };
  }
  throw new IntrinsicSyntaxError(`unexpected "${rest.slice(0, 20)}" in "${p.s}"`);
}

/** Hash functions `States.Hash` uses, by algorithm name (`MD5`, `SHA-1`, `SHA-256`, ...): hex out. */
export type HashFunction = (algorithm: string, data: string) => string;

/** What evaluating an intrinsic needs besides the paths' scope. */
export interface IntrinsicEnv extends PathScope {
  /** For `States.Hash`; without it the call fails with `States.Runtime`. */
  hash?: HashFunction | undefined;
  /** For error messages: the field being evaluated (`value.$`). */
  field: string;
}

/** Evaluates an intrinsic call in `env`; bad arguments throw `States.Runtime`. */
export function evaluateIntrinsic(text: string, env: IntrinsicEnv): unknown {
  return evaluate(parseIntrinsic(text), env);
}

function evaluate(arg: Arg, env: IntrinsicEnv): unknown {
  if (arg.t === 'lit') return arg.value;
  if (arg.t === 'path') {
    const r = readJsonPath(arg.path, env);
    if (!r.found)
      throw new AslRuntimeError(
        'States.Runtime',
        `The JSONPath '${arg.path}' specified for the field '${env.field}' could not be found in the input '${JSON.stringify(env.data)}'`,
      );
    return r.value;
  }
  const args = arg.args.map((a) => evaluate(a, env));
  return call(arg.name, args, env);
}

function bad(name: string, why: string): never {
  throw new AslRuntimeError('States.Runtime', `${name}: ${why}`);
}

function num(name: string, v: unknown): number {
  if (typeof v !== 'number') bad(name, `expected a number, got ${JSON.stringify(v)}`);
  return v;
}

function str(name: string, v: unknown): string {
  if (typeof v !== 'string') bad(name, `expected a string, got ${JSON.stringify(v)}`);
  return v;
}

function arr(name: string, v: unknown): unknown[] {
  if (!Array.isArray(v)) bad(name, `expected an array, got ${JSON.stringify(v)}`);
  return v;
}

function call(name: string, a: unknown[], env: IntrinsicEnv): unknown {
  switch (name) {
    case 'States.Format':
      return format(str(name, a[0]), a.slice(1));
    case 'States.StringToJson':
      // A blank string is null, as AWS has it.
      if (str(name, a[0]).trim() === '') return null;
      try {
        return JSON.parse(str(name, a[0]));
      } catch {
        return bad(name, 'the argument is not JSON');
      }
    case 'States.JsonToString':
      return JSON.stringify(a[0]);
    case 'States.Array':
      return a;
    case 'States.ArrayPartition': {
      const xs = arr(name, a[0]);
      const n = num(name, a[1]);
      if (n < 1) bad(name, 'chunk size must be positive');
      const out: unknown[][] = [];
      for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
      return out;
    }
    case 'States.ArrayContains':
      return arr(name, a[0]).some((x) => JSON.stringify(x) === JSON.stringify(a[1]));
    case 'States.ArrayRange': {
      const [from, to, step] = [num(name, a[0]), num(name, a[1]), num(name, a[2])];
      if (step === 0) bad(name, 'step must not be 0');
      const out: number[] = [];
      for (let i = from; step > 0 ? i <= to : i >= to; i += step) {
        out.push(i);
        if (out.length > 1000) bad(name, 'more than 1000 items');
      }
      return out;
    }
    case 'States.ArrayGetItem': {
      const xs = arr(name, a[0]);
      const i = num(name, a[1]);
      if (i < 0 || i >= xs.length) bad(name, `index ${i} out of bounds`);
      return xs[i];
    }
    case 'States.ArrayLength':
      return arr(name, a[0]).length;
    case 'States.ArrayUnique': {
      const seen = new Set<string>();
      return arr(name, a[0]).filter((x) => {
        const k = JSON.stringify(x);
        if (seen.has(k)) return false;
        seen.add(k);
        return true;
      });
    }
    case 'States.Base64Encode':
      return bytesToBase64(new TextEncoder().encode(str(name, a[0])));
    case 'States.Base64Decode':
      return new TextDecoder().decode(base64ToBytes(str(name, a[0])));
    case 'States.Hash': {
      if (!env.hash) return bad(name, 'no hash function was given to the handlers');
      const data = typeof a[0] === 'string' ? a[0] : JSON.stringify(a[0]);
      return env.hash(str(name, a[1]), data);
    }
    case 'States.JsonMerge': {
      const [x, y, deep] = a;
      if (deep !== false) bad(name, 'only a shallow merge (false) is supported');
      if (!isObject(x) || !isObject(y)) bad(name, 'both arguments must be objects');
      return { ...x, ...y };
    }
    case 'States.MathAdd':
      // AWS rounds each operand to an integer (half up) before adding.
      return Math.round(num(name, a[0])) + Math.round(num(name, a[1])) || 0;
    case 'States.StringSplit': {
      const delims = new Set(str(name, a[1]));
      const out: string[] = [];
      let cur = '';
      for (const c of str(name, a[0])) {
        if (delims.has(c)) {
          if (cur !== '') out.push(cur);
          cur = '';
        } else cur += c;
      }
      if (cur !== '') out.push(cur);
      return out;
    }
  }
  return bad(name, 'not supported');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** `States.Format`: each `{}` takes the next argument; `\{` and `\}` are literal braces. */
function format(template: string, args: unknown[]): string {
  let out = '';
  let next = 0;
  for (let i = 0; i < template.length; i++) {
    const c = template[i]!;
    if (c === '\\' && (template[i + 1] === '{' || template[i + 1] === '}')) {
      out += template[++i];
    } else if (c === '{' && template[i + 1] === '}') {
      if (next >= args.length) bad('States.Format', 'more {} than arguments');
      const v = args[next++];
      out += formatted(v);
      i++;
    } else out += c;
  }
  return out;
}

/** A value as `States.Format` writes it: strings bare, objects as `{k=v, ...}`, lists as `[a, b]` (Java's form). */
function formatted(v: unknown): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return `[${v.map(formatted).join(', ')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${k}=${formatted(x)}`)
      .join(', ')}}`;
  return JSON.stringify(v);
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function bytesToBase64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const [a, b, c] = [bytes[i]!, bytes[i + 1], bytes[i + 2]];
    const n = (a << 16) | ((b ?? 0) << 8) | (c ?? 0);
    out += B64[(n >> 18) & 63]! + B64[(n >> 12) & 63]!;
    out += b === undefined ? '=' : B64[(n >> 6) & 63]!;
    out += c === undefined ? '=' : B64[n & 63]!;
  }
  return out;
}

function base64ToBytes(text: string): Uint8Array {
  const clean = text.replace(/=+$/, '');
  const out: number[] = [];
  let bits = 0;
  let acc = 0;
  for (const c of clean) {
    const v = B64.indexOf(c);
    if (v < 0) bad('States.Base64Decode', 'not base64');
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push((acc >> bits) & 255);
    }
  }
  return new Uint8Array(out);
}
