import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as zod from 'zod/mini';
import * as mini from '../src/mini-schema.js';

// The engine's schemas (`mini-schema.ts`) stand in for zod/mini's: the same constructions, built
// with each, must accept the same values with the same output (keys and their order) and refuse
// the rest with the same issues (code, path, message), in the same order.

type Lib = typeof mini;

/** The constructions the engine uses, built with either library (the same calls). */
function build(z: Lib) {
  const safeInt = z.check<number>((p) => {
    if (!Number.isInteger(p.value)) p.issues.push({ code: 'invalid_type', expected: 'int', input: p.value });
  });
  const text = (min: number, max: number) => z.string().check(z.minLength(min), z.maxLength(max));
  const int = (min: number, max: number) => z.number().check(safeInt, z.minimum(min), z.maximum(max));
  const path = text(1, 5);
  const reserved = z.refine((o: object) => !Object.keys(o).includes('constructor'), {
    message: 'reserved key',
    abort: true,
  });
  const mapping = z.union([path, z.catchall(z.object({}), path).check(reserved)]);
  const cond = z.custom<object>((v) => typeof v === 'object' && v !== null);
  const trigger = z.strictObject({ event: path, filter: z.optional(cond) });
  const step = z.strictObject({
    id: z.optional(path),
    kind: z.literal(['task', 'wait']),
    n: z.optional(int(1, 3)),
    f: z.optional(z.number().check(z.minimum(0), z.maximum(1))),
    input: z.optional(mapping),
    list: z.optional(z.array(text(1, 2)).check(z.minLength(1), z.maxLength(2))),
    ok: z.optional(z.boolean()),
    any: z.optional(z.unknown()),
    named: z.optional(z.string().check(z.refine((s: string) => s !== 'x', 'not x'))),
  });
  return {
    text: text(2, 3),
    int: int(-2, 2),
    mapping,
    triggers: z.union([trigger, z.array(trigger)]),
    step,
    loose: z.object({ kind: z.literal('a'), v: z.unknown(), c: cond }),
    steps: z.union([z.catchall(z.object({}), step), z.array(step)]),
    offload: z.union([
      z.literal(false),
      z.strictObject({ keep: z.optional(z.array(path).check(z.maxLength(2))) }),
    ]),
  };
}

const ours = build(mini);
const theirs = build(zod as unknown as Lib);

const ser = (v: unknown) =>
  JSON.stringify(v, (_, x) =>
    x === undefined ? '(undefined)' : typeof x === 'number' && !Number.isFinite(x) ? String(x) : x,
  );
const result = (r: ReturnType<mini.Schema['safeParse']>) =>
  r.success
    ? { ok: ser(r.data) }
    : { issues: r.error.issues.map((i) => ({ code: i.code, path: i.path.join('.'), message: i.message })) };

const leaf = fc.constantFrom<unknown>(
  '',
  'a',
  'ab',
  'abc',
  'abcd',
  'abcdef',
  '😀😀',
  '😀',
  '\ud83d',
  'x',
  'task',
  'wait',
  'constructor',
  'a',
  0,
  1,
  2,
  3,
  -2,
  -3,
  0.5,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  2 ** 53,
  -0,
  true,
  false,
  null,
  undefined,
  [],
  {},
  ['a'],
  ['a', 'b', 'c'],
  { a: 'a' },
  JSON.parse('{"__proto__":"a"}'),
  { constructor: 'a' },
);
/** Values for a schema whose objects read `keys`: objects of some of them (and one other), nested. */
function values(keys: string[]) {
  return fc.letrec<{ v: unknown }>((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      leaf,
      fc.array(tie('v'), { maxLength: 3 }),
      fc.record(Object.fromEntries([...keys, 'x'].map((k) => [k, fc.oneof(leaf, leaf, tie('v'))])), {
        requiredKeys: [],
      }),
    ),
  })).v;
}

/** The keys each construction's objects read. */
const KEYS: Record<keyof typeof ours, string[]> = {
  text: [],
  int: [],
  mapping: ['a', 'constructor'],
  triggers: ['event', 'filter'],
  step: ['id', 'kind', 'n', 'f', 'input', 'list', 'ok', 'any', 'named'],
  loose: ['kind', 'v', 'c'],
  steps: ['a', 'kind', 'n', 'input'],
  offload: ['keep'],
};

describe('mini-schema agrees with zod/mini', () => {
  for (const name of Object.keys(ours) as Array<keyof typeof ours>) {
    it(`${name}: the same output or the same issues`, () => {
      fc.assert(
        fc.property(values(KEYS[name]), (v) => {
          const a = result(ours[name].safeParse(v));
          const b = result(
            theirs[name].safeParse(v, { error: (i) => mini.issueMessage(i as mini.RawIssue) }) as never,
          );
          expect(a).toEqual(b);
        }),
        { numRuns: 2000 },
      );
    });
  }
});
