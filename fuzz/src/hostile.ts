import fc from 'fast-check';

// Hostile values and a structural mutator: every target starts from something valid and breaks it
// at random places, so inputs get past the first check and reach the deeper ones.

/** Keys that reach a prototype when assigned, and names that shadow an object's methods. */
export const RESERVED = ['__proto__', 'constructor', 'prototype'] as const;

/** A nest `depth` levels deep of arrays or objects: stack depth for recursive checks. */
export function deep(depth: number, as: 'array' | 'object'): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = as === 'array' ? [v] : { a: v };
  return v;
}

/** JSON text with a `__proto__` key whose value plants `polluted` (JSON.parse keeps it as an own key). */
export const PROTO_JSON =
  '{"__proto__":{"polluted":1,"isAdmin":true},"constructor":{"prototype":{"polluted":1}}}';

/** A plain object with an own `__proto__` key, as JSON.parse makes one. */
export const protoObject = (): Record<string, unknown> => JSON.parse(PROTO_JSON);

/** An object whose prototype was replaced, as an object literal `{ __proto__: … }` does. */
export const foreignPrototype = (): object => ({ __proto__: { polluted: 1 }, a: 1 });

/** A value with a reference cycle (not JSON: a JavaScript caller can still pass one). */
export function cyclic(): object {
  const o: Record<string, unknown> = { a: 1 };
  o['self'] = o;
  return o;
}

const HUGE = 'x'.repeat(1 << 20);
const WIDE = 'é'.repeat(70_000);

/** A hostile value of ordinary size: special numbers and strings, reserved names, `__proto__` objects. */
export const hostileSmall: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .constantFrom<unknown>(
        1e308,
        -1e308,
        Number.NaN,
        Number.POSITIVE_INFINITY,
        Number.NEGATIVE_INFINITY,
        -0,
        0,
        -1,
        0.5,
        2 ** 53,
        2 ** 31,
        Number.MAX_SAFE_INTEGER + 2,
        8.64e15 + 1,
        '',
        ' ',
        'a b',
        '\u0000',
        '\ud800',
        '💥',
        '../../etc/passwd',
        '__proto__',
        'constructor',
        'prototype',
        'toString',
        'hasOwnProperty',
        'input.__proto__.polluted',
        'outputs.constructor.prototype',
        'input.',
        '$child',
        'x'.repeat(201),
        'x'.repeat(2001),
        true,
        false,
        null,
        [],
        {},
        [null],
        { kind: 'nope' },
      )
      .map((v) => (typeof v === 'object' && v !== null ? structuredClone(v) : v)),
  },
  { weight: 3, arbitrary: fc.constant(null).map(() => protoObject()) },
  { weight: 1, arbitrary: fc.constant(null).map(() => foreignPrototype()) },
  { weight: 1, arbitrary: fc.constant(null).map(() => Object.create(null) as unknown) },
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.double() },
  { weight: 2, arbitrary: fc.integer() },
);

/** One hostile scalar or structure, now and then a megabyte string or a nest thousands deep (never a function or a getter: inputs are data). */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 20, arbitrary: hostileSmall },
  // By index, not by value: fast-check would hash a megabyte string to map it back for shrinking.
  { weight: 1, arbitrary: fc.nat(1).map((i) => (i ? HUGE : WIDE)) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(600, 5000, 20_000), fc.constantFrom('array' as const, 'object' as const))
      .map(([d, as]) => deep(d, as)),
  },
);

/** A hostile value that JSON can carry (what a store, a notice or a form may hold). */
export const hostileJson: fc.Arbitrary<unknown> = hostileValue.filter((v) => {
  try {
    return JSON.stringify(v) !== undefined && !(typeof v === 'object' && v !== null && isForeign(v));
  } catch {
    return false;
  }
});

function isForeign(v: object): boolean {
  const p = Object.getPrototypeOf(v);
  return p !== Object.prototype && p !== Array.prototype;
}

/** A key to insert: reserved names mostly, else random text. */
export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...RESERVED) },
  { weight: 1, arbitrary: fc.constantFrom('', 'a.b', 'kind', 'id', 'steps', 'next', 'x'.repeat(300), '0') },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
);

/** One change at one place of a tree; `at` picks the place among all nodes, `pick` a sibling or an id. */
export type Mutation =
  | { op: 'delete'; at: number }
  | { op: 'replace'; at: number; value: unknown }
  | { op: 'insert'; at: number; key: string; value: unknown }
  | { op: 'wrap'; at: number; as: 'array' | 'object' }
  | { op: 'swap'; at: number; pick: number }
  | { op: 'rename'; at: number; key: string }
  | { op: 'extend'; at: number; segment: string };

/** Random mutations, `min` to `max` of them. */
export function mutationsArb(
  min = 1,
  max = 4,
  value: fc.Arbitrary<unknown> = hostileValue,
): fc.Arbitrary<Mutation[]> {
  const at = fc.nat();
  const one: fc.Arbitrary<Mutation> = fc.oneof(
    { weight: 3, arbitrary: fc.record({ op: fc.constant('delete' as const), at }) },
    { weight: 5, arbitrary: fc.record({ op: fc.constant('replace' as const), at, value }) },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('insert' as const), at, key: hostileKey, value }) },
    {
      weight: 1,
      arbitrary: fc.record({
        op: fc.constant('wrap' as const),
        at,
        as: fc.constantFrom('array' as const, 'object' as const),
      }),
    },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('swap' as const), at, pick: fc.nat() }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('rename' as const), at, key: hostileKey }) },
    {
      weight: 2,
      arbitrary: fc.record({
        op: fc.constant('extend' as const),
        at,
        segment: fc.oneof(fc.constantFrom(...RESERVED), hostileKey),
      }),
    },
  );
  return fc.array(one, { minLength: min, maxLength: max });
}

interface Place {
  parent: Record<string, unknown> | unknown[] | null;
  key: string | number;
  value: unknown;
}

/** Every node of a JSON-like tree (the root has no parent), at most `limit` of them. */
function places(root: unknown, limit = 5000): Place[] {
  const out: Place[] = [{ parent: null, key: '', value: root }];
  for (let i = 0; i < out.length && out.length < limit; i++) {
    const v = out[i]!.value;
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) v.forEach((x, k) => out.push({ parent: v, key: k, value: x }));
    else
      for (const [k, x] of Object.entries(v))
        out.push({ parent: v as Record<string, unknown>, key: k, value: x });
  }
  return out;
}

/** Sets an own property, even `__proto__` (as JSON.parse would), never through a setter. */
export function defineOwn(o: object, key: string | number, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Applies `mutations` to a copy of `value` (a JSON value): deletes, replaces, inserts (own keys,
 * `__proto__` included), wraps in an array or object, swaps in another node's value (`next`
 * pointing at another step: cycles and dangling links), renames keys, extends a string by a
 * segment (a data path through `__proto__`). Returns the mutated copy.
 */
export function mutate(value: unknown, mutations: readonly Mutation[]): unknown {
  const box = { root: structuredClone(value) as unknown };
  for (const m of mutations) {
    const all = places(box.root);
    const p = all[m.at % all.length]!;
    const set = (v: unknown) => {
      if (p.parent === null) box.root = v;
      else defineOwn(p.parent, p.key, v);
    };
    switch (m.op) {
      case 'delete':
        if (p.parent === null) box.root = undefined;
        else if (Array.isArray(p.parent)) p.parent.splice(p.key as number, 1);
        else delete p.parent[p.key as string];
        break;
      case 'replace':
        set(m.value);
        break;
      case 'insert':
        if (typeof p.value === 'object' && p.value !== null) {
          if (Array.isArray(p.value)) p.value.push(m.value);
          else defineOwn(p.value, m.key, m.value);
        } else set(m.value);
        break;
      case 'wrap':
        set(m.as === 'array' ? [p.value] : { [String(p.key) || 'v']: p.value });
        break;
      case 'swap': {
        // Another node's value here: for definitions mostly another step id, so links go astray.
        const strings = all.filter((q) => typeof q.value === 'string');
        const from = strings.length ? strings[m.pick % strings.length]! : all[m.pick % all.length]!;
        set(structuredCloneSafe(from.value));
        break;
      }
      case 'extend': {
        // A segment more on some string: a data path (`input.a` → `input.a.__proto__`) mostly.
        const strings = all.filter((q) => typeof q.value === 'string' && q.parent !== null);
        const q = strings.length ? strings[m.at % strings.length]! : undefined;
        if (q) defineOwn(q.parent!, q.key, `${q.value as string}.${m.segment}`);
        break;
      }
      case 'rename':
        if (p.parent !== null && !Array.isArray(p.parent)) {
          delete p.parent[p.key as string];
          defineOwn(p.parent, m.key, p.value);
        }
        break;
    }
  }
  return box.root;
}

function structuredCloneSafe(v: unknown): unknown {
  try {
    return structuredClone(v);
  } catch {
    return v;
  }
}

/** Cuts JSON text at a random place, or garbles one character: what a torn write leaves. */
export const textDamage: fc.Arbitrary<(text: string) => string> = fc.oneof(
  fc.nat().map((n) => (t: string) => t.slice(0, n % (t.length + 1))),
  fc
    .tuple(fc.nat(), fc.constantFrom('"', '{', '}', '\\', '\u0000', ',', 'x', ']'))
    .map(([n, c]) => (t: string) => {
      const i = n % (t.length + 1);
      return t.slice(0, i) + c + t.slice(i + 1);
    }),
  fc.constantFrom<(t: string) => string>(
    () => '',
    () => 'null',
    () => '[]',
    () => '"text"',
    () => '1e999',
    (t) => `${t}${t}`,
    (t) => t.replace(/"steps":\{/, `"steps":{"__proto__":{"status":"active"},`),
  ),
);
