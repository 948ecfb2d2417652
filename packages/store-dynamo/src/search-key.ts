import type { SearchFilter, SearchValue } from '@stepfold/engine';
import { sortableNumber } from './encode.js';

// The keys of the search index. Each (instance, attribute) with a value is an item of its own,
// `#search#<instance>#<name>`, on the index partition of the attribute's name, sorted by its key:
// the value's kind ('b' < 'n' < 's': booleans, numbers, strings, the order of every store), the
// value encoded so that comparing keys compares values, END, then the instance id. Every key is
// ASCII, so DynamoDB's byte order is JavaScript's string order, and for one value the entries
// sort by id. Ranges, equality, `in` and the order by value are then key ranges of one partition.

/** `id` prefix of search index items ('#' is in no instance id: no instance collides with them). */
export const SEARCH_ITEM_PREFIX = '#search#';

// Ends a key's value part: below every character a value part continues with, so a value sorts
// before every value it is a prefix of.
const END = '\u0001';
// Above every character of an id and every first character of a value part: closes a range.
const TOP = '\u007f';

/** The table key of the index item of `name` on `instance`. */
export function searchItemId(instance: string, name: string): string {
  return `${SEARCH_ITEM_PREFIX}${instance}#${name}`;
}

/**
 * A string as characters 0x01-0x7f whose order is the order of the UTF-16 units (how the engine
 * compares strings), one to three characters a unit: a control unit is 0x02 and one more; a
 * printable ASCII unit is one character (0x03-0x61); any other unit a lead (0x62-0x66) and two
 * base-127 digits (0x01-0x7f). Units of one class have one length, and the classes' first
 * characters are ordered as the classes, so the first differing unit decides, as in the engine.
 */
function textKey(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    if (u < 0x20) out += `\u0002${String.fromCharCode(0x20 + u)}`;
    else if (u < 0x7f) out += String.fromCharCode(u - 0x1d);
    else {
      const v = u - 0x7f;
      out += String.fromCharCode(
        0x62 + Math.floor(v / 16129),
        1 + Math.floor((v % 16129) / 127),
        1 + (v % 127),
      );
    }
  }
  return out;
}

/** A value's place in the index: its kind then its encoding, without END. */
export function valueKey(v: SearchValue): string {
  if (typeof v === 'boolean') return v ? 'b1' : 'b0';
  // `sortableNumber` maps -0 to 0, as JSON does.
  if (typeof v === 'number') return `n${sortableNumber(v)}`;
  return `s${textKey(v)}`;
}

/** The index key of `instance` holding `v`. */
export function searchKey(v: SearchValue, instance: string): string {
  return valueKey(v) + END + instance;
}

/** The first key of the entries holding exactly `v`; every one of them starts with it. */
export function valuePrefix(v: SearchValue): string {
  return valueKey(v) + END;
}

/** The instance id at the end of a search key. */
export function instanceOfKey(key: string): string {
  return key.slice(key.lastIndexOf(END) + 1);
}

/** An inclusive range of keys (`lo` <= key <= `hi`). */
export interface KeyRange {
  lo: string;
  hi: string;
}

/** The whole partition: every key starts with 'b', 'n' or 's' (a key condition takes no empty string). */
export const WHOLE_RANGE: KeyRange = { lo: 'b', hi: TOP };

/** The keys of every entry holding `v` (an `in` of them spans from its least to its greatest). */
export function valueRange(v: SearchValue): KeyRange {
  const p = valuePrefix(v);
  return { lo: p, hi: p + TOP };
}

/**
 * The keys the conditions on one attribute allow, all of them together (an `in` narrows to the
 * span of its values), or null when none can hold: a range matches only values of its bound's
 * kind, so bounds of two kinds leave nothing.
 */
export function keyRange(filters: readonly SearchFilter[]): KeyRange | null {
  let { lo, hi } = WHOLE_RANGE;
  const narrow = (l: string, h: string) => {
    if (l > lo) lo = l;
    if (h < hi) hi = h;
  };
  for (const f of filters) {
    if (f.op === 'in') {
      if (!f.values.length) return null;
      const keys = f.values.map(valuePrefix).sort();
      narrow(keys[0]!, keys[keys.length - 1]! + TOP);
      continue;
    }
    const k = valueKey(f.value);
    const kind = k[0]!;
    if (f.op === 'eq') narrow(k + END, k + END + TOP);
    else if (f.op === 'gt') narrow(k + END + TOP, kind + TOP);
    else if (f.op === 'gte') narrow(k + END, kind + TOP);
    // Below every key of the value itself (they continue with END and an id), above every lesser.
    else if (f.op === 'lt') narrow(kind, k);
    else narrow(kind, k + END + TOP);
  }
  return lo <= hi ? { lo, hi } : null;
}
