import { isStepfoldError } from '@stepfold/engine';

// What every input is checked for besides its target's own oracle: the built-in prototypes it
// could pollute, and time. A finding is an Error whose message says what broke; fast-check
// shrinks the input that threw it and reports its seed and path.

/** A broken property of one input: the message names the rule. */
export class Finding extends Error {
  override readonly name = 'Finding';
}

/** Throws a {@link Finding} with `message` unless `ok`. */
export function expect(ok: unknown, message: string | (() => string)): asserts ok {
  if (!ok) throw new Finding(typeof message === 'string' ? message : message());
}

/** The names hostile inputs try to plant on a prototype; `({})[name]` must stay undefined. */
export const PLANTED_NAMES = ['polluted', 'isAdmin', 'kind', 'status', 'then', 'toJSON', 'x'] as const;

const WATCHED: ReadonlyArray<[string, object]> = [
  ['Object.prototype', Object.prototype],
  ['Array.prototype', Array.prototype],
  ['Function.prototype', Function.prototype],
  ['Object', Object],
  ['String.prototype', String.prototype],
];

type Descriptors = Map<PropertyKey, PropertyDescriptor>;

function descriptorsOf(o: object): Descriptors {
  const out: Descriptors = new Map();
  for (const key of Reflect.ownKeys(o)) out.set(key, Reflect.getOwnPropertyDescriptor(o, key)!);
  return out;
}

const sameDescriptor = (a: PropertyDescriptor, b: PropertyDescriptor) =>
  Object.is(a.value, b.value) &&
  a.get === b.get &&
  a.set === b.set &&
  a.writable === b.writable &&
  a.enumerable === b.enumerable &&
  a.configurable === b.configurable;

/** The built-ins' own properties as they were when this was called; `changes()` lists what differs now. */
export function watchPrototypes(): { changes(): string[] } {
  const before = WATCHED.map(([name, o]) => [name, o, descriptorsOf(o)] as const);
  const frozenBefore = WATCHED.map(([, o]) => Object.isExtensible(o));
  return {
    changes() {
      const out: string[] = [];
      before.forEach(([name, o, was], i) => {
        const now = descriptorsOf(o);
        for (const [key, d] of now) {
          const old = was.get(key);
          if (!old) out.push(`${name}.${String(key)} was added`);
          else if (!sameDescriptor(old, d)) out.push(`${name}.${String(key)} was changed`);
        }
        for (const key of was.keys()) if (!now.has(key)) out.push(`${name}.${String(key)} was removed`);
        if (Object.isExtensible(o) !== frozenBefore[i]) out.push(`${name} extensibility changed`);
      });
      const probe = {} as Record<string, unknown>;
      for (const name of PLANTED_NAMES) {
        if (probe[name] !== undefined) out.push(`({}).${name} is ${String(probe[name])}`);
      }
      return out;
    },
  };
}

/**
 * Puts the built-ins back as `watch` first saw them, so one polluting input is reported once
 * rather than failing every input after it (and shrinking still sees a clean world).
 */
export function restorePrototypes(): void {
  for (const [, o] of WATCHED) {
    const was = snapshots.get(o);
    if (!was) continue;
    for (const key of Reflect.ownKeys(o)) if (!was.has(key)) Reflect.deleteProperty(o, key);
    for (const [key, d] of was) {
      const now = Reflect.getOwnPropertyDescriptor(o, key);
      if (!now || !sameDescriptor(now, d)) Reflect.defineProperty(o, key, d);
    }
  }
}

const snapshots = new Map<object, Descriptors>(WATCHED.map(([, o]) => [o, descriptorsOf(o)]));

/** True for a typed stepfold error: the only kind of throw an input may cause. */
export function isTyped(e: unknown): boolean {
  return isStepfoldError(e);
}

/** What an untyped throw was, for a finding's message. */
export function describe(e: unknown): string {
  if (e instanceof Error) {
    // Where it was thrown: the first frames, so a finding points at the code without a replay.
    const frames = (e.stack ?? '')
      .split('\n')
      .filter((l) => l.trim().startsWith('at '))
      .slice(0, 3);
    return `${e.name}: ${e.message.slice(0, 300)}${frames.length ? `\n    ${frames.map((f) => f.trim()).join('\n    ')}` : ''}`;
  }
  return `non-error throw: ${String(e).slice(0, 300)}`;
}

/** Runs `fn`; a typed error is returned as the outcome, anything else thrown is a finding. */
export function typedOrValue<T>(
  fn: () => T,
  where: string,
): { ok: true; value: T } | { ok: false; error: Error } {
  try {
    return { ok: true, value: fn() };
  } catch (e) {
    if (e instanceof Finding) throw e;
    expect(isTyped(e), () => `${where}: untyped ${describe(e)}`);
    return { ok: false, error: e as Error };
  }
}

/** {@link typedOrValue} for a promise. */
export async function typedOrValueAsync<T>(
  fn: () => Promise<T>,
  where: string,
): Promise<{ ok: true; value: T } | { ok: false; error: Error }> {
  try {
    return { ok: true, value: await fn() };
  } catch (e) {
    if (e instanceof Finding) throw e;
    expect(isTyped(e), () => `${where}: untyped ${describe(e)}`);
    return { ok: false, error: e as Error };
  }
}

/** Rejects with a hang finding when `work` takes longer than `ms`. */
export async function withBudget<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Finding(`${what}: no answer within ${ms} ms (a hang)`)), ms);
  });
  try {
    return await Promise.race([work, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Problems that keep `value` from surviving a JSON round trip as it is: non-finite numbers,
 * `undefined` in arrays, functions, symbols, bigints, objects that are not plain (a class
 * instance, a foreign prototype). `-0` and undefined properties are fine (JSON gives 0 and drops them).
 */
export function jsonIssues(value: unknown, path = '$', out: string[] = [], depth = 0): string[] {
  if (out.length > 5) return out;
  if (depth > 10_000) {
    out.push(`${path}: nested deeper than 10000`);
    return out;
  }
  switch (typeof value) {
    case 'number':
      if (!Number.isFinite(value)) out.push(`${path}: ${value}`);
      return out;
    case 'string':
    case 'boolean':
      return out;
    case 'undefined':
      out.push(`${path}: undefined`);
      return out;
    case 'object': {
      if (value === null) return out;
      const proto = Object.getPrototypeOf(value);
      if (Array.isArray(value)) {
        if (proto !== Array.prototype) out.push(`${path}: array with a foreign prototype`);
        value.forEach((v, i) => {
          jsonIssues(v, `${path}[${i}]`, out, depth + 1);
        });
        return out;
      }
      if (proto !== Object.prototype && proto !== null) out.push(`${path}: not a plain object`);
      for (const [k, v] of Object.entries(value)) {
        if (v !== undefined) jsonIssues(v, `${path}.${k}`, out, depth + 1);
      }
      return out;
    }
    default:
      out.push(`${path}: a ${typeof value}`);
      return out;
  }
}
