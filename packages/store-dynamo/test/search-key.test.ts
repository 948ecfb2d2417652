// The search index's keys, without a server: comparing two keys must compare (value, id) as the
// engine orders them, and the key range of a set of conditions must hold exactly the keys of the
// values that pass them all.
import {
  compareSearch,
  MAX_SEARCH_TEXT,
  passes,
  type SearchFilter,
  type SearchValue,
} from '@stepfold/engine';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keyRange, searchKey, valuePrefix } from '../src/search-key.js';

const sign = (n: number) => (n < 0 ? -1 : n > 0 ? 1 : 0);
const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

// Strings that share prefixes and reach every class of unit: controls, ASCII, Latin, surrogates, the top.
const unit = fc.oneof(
  fc.constantFrom('\u0000', '\u001f', ' ', 'a', 'b', '~', '\u007f', 'é', '\ud83d', '\ude00', '\uffff'),
  fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)),
);
const text = fc.array(unit, { maxLength: 6 }).map((us) => us.join(''));
const value: fc.Arbitrary<SearchValue> = fc.oneof(
  fc.boolean(),
  fc.constantFrom(0, -0, 1, -1, 0.5, 1e-300, -1e300, Number.MAX_VALUE, -Number.MIN_VALUE),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  text,
);
const id = fc.constantFrom('a', 'ab', 'b', 'i-01', 'i-1', 'Z', '9', 'x.y');
const filter: fc.Arbitrary<SearchFilter> = fc.oneof(
  fc.record({
    name: fc.constant('f'),
    op: fc.constantFrom('eq' as const, 'gt' as const, 'gte' as const, 'lt' as const, 'lte' as const),
    value,
  }),
  fc.record({
    name: fc.constant('f'),
    op: fc.constant('in' as const),
    values: fc.array(value, { maxLength: 3 }),
  }),
);

describe('search index keys', () => {
  it('order as (value, id): kinds, then values by the engine, then ids', () => {
    fc.assert(
      fc.property(value, id, value, id, (a, ia, b, ib) => {
        const byValue = compareSearch(a, b);
        const expected = byValue !== 0 ? sign(byValue) : order(ia, ib);
        expect(order(searchKey(a, ia), searchKey(b, ib))).toBe(expected);
      }),
      { numRuns: 5000 },
    );
  });

  it('are ASCII without NUL, and the longest fits a sort key of 1,024 bytes', () => {
    fc.assert(
      fc.property(value, id, (v, i) => {
        const key = searchKey(v, i);
        expect([...key].every((c) => c >= '\u0001' && c <= '\u007f')).toBe(true);
      }),
    );
    const longest = searchKey('\uffff'.repeat(MAX_SEARCH_TEXT), 'i'.repeat(200));
    expect(longest.length).toBeLessThanOrEqual(1024);
  });

  it('a range of conditions holds exactly the keys of the values that pass them all', () => {
    fc.assert(
      fc.property(fc.array(filter, { minLength: 1, maxLength: 3 }), value, id, (filters, v, i) => {
        const range = keyRange(filters);
        const k = searchKey(v, i);
        const inRange = range !== null && range.lo <= k && k <= range.hi;
        if (filters.every((f) => passes(v, f))) expect(inRange).toBe(true);
        // Without `in` the range is exact; an `in` spans from its least value to its greatest.
        else if (filters.every((f) => f.op !== 'in')) expect(inRange).toBe(false);
      }),
      { numRuns: 5000 },
    );
  });

  it('the entries of one value are a run of keys that starts with its prefix', () => {
    fc.assert(
      fc.property(value, value, id, (a, b, i) => {
        const same = compareSearch(a, b) === 0 && typeof a === typeof b;
        expect(searchKey(b, i).startsWith(valuePrefix(a))).toBe(same);
      }),
      { numRuns: 3000 },
    );
  });
});
