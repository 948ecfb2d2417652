import type { SearchFilter, SearchValue } from '@stepfold/engine';

// Search attributes as Redis keeps them: one sorted set per attribute name (score 0), whose
// members are `<kind><value>\x01<id>`, so the lexicographic order (byte by byte) is the order
// every store lists in: booleans, then numbers, then strings, each by value, ties by id. Equality,
// `in` and ranges are ZRANGEBYLEX ranges of one set. A string's bytes below 0x08 are escaped
// (0x07 then 0x08 + byte), so `\x01` ends every value and `a` sorts before `a…`. The instance's
// hash keeps its entries too (field `sa`, `<name>\x02<member>` joined by `\x03`), so a save
// removes the old ones and a listing reads an instance's other values without its snapshot.

/** The byte that ends a value in a member, before the id. */
const END = '\u0001';
/** Between an attribute's name and its member in the `sa` field. */
const NAME_END = '\u0002';
/** Between two entries in the `sa` field. */
const ENTRY_END = '\u0003';
/** Leads an escaped low byte in a string value. */
const ESCAPE = '\u0007';

/** The 16 hex digits of a float64 whose string order is the numbers' order. */
function sortableNumber(n: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, n === 0 ? 0 : n);
  let hi = view.getUint32(0);
  let lo = view.getUint32(4);
  if (hi & 0x8000_0000) {
    hi = ~hi >>> 0;
    lo = ~lo >>> 0;
  } else hi = (hi | 0x8000_0000) >>> 0;
  return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
}

/** {@link sortableNumber} back. */
function numberOf(hex: string): number {
  let hi = Number.parseInt(hex.slice(0, 8), 16);
  let lo = Number.parseInt(hex.slice(8), 16);
  if (hi & 0x8000_0000) hi = (hi & 0x7fff_ffff) >>> 0;
  else {
    hi = ~hi >>> 0;
    lo = ~lo >>> 0;
  }
  const view = new DataView(new ArrayBuffer(8));
  view.setUint32(0, hi);
  view.setUint32(4, lo);
  return view.getFloat64(0);
}

/** A value as it starts a member: its kind digit (the rank of its kind), then its sortable body. */
export function encodeValue(v: SearchValue): string {
  if (typeof v === 'boolean') return v ? '01' : '00';
  if (typeof v === 'number') return `1${sortableNumber(v)}`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the low bytes are what is escaped
  return `2${v.replace(/[\u0000-\u0007]/g, (c) => ESCAPE + String.fromCharCode(8 + c.charCodeAt(0)))}`;
}

/** {@link encodeValue} back. */
function decodeValue(text: string): SearchValue {
  const body = text.slice(1);
  if (text[0] === '0') return body === '1';
  if (text[0] === '1') return numberOf(body);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape byte is a low byte
  return body.replace(/\u0007([\u0008-\u000f])/g, (_, c: string) => String.fromCharCode(c.charCodeAt(0) - 8));
}

/** The member of `id` in its attribute's set. */
export function searchMember(v: SearchValue, id: string): string {
  return encodeValue(v) + END + id;
}

/** A member back as its value and id. */
export function parseMember(member: string): { value: SearchValue; id: string } {
  const at = member.lastIndexOf(END);
  return { value: decodeValue(member.slice(0, at)), id: member.slice(at + 1) };
}

/** The `sa` field of an instance with these attributes ('' for none): what the scripts index. */
export function searchField(id: string, search: Readonly<Record<string, SearchValue>> | null): string {
  if (!search) return '';
  const out: string[] = [];
  for (const name of Object.keys(search).sort()) out.push(name + NAME_END + searchMember(search[name]!, id));
  return out.join(ENTRY_END);
}

/** An `sa` field back as attribute values (null for an absent or empty field). */
export function parseSearchField(field: string | null): Record<string, SearchValue> | null {
  if (!field) return null;
  const out: Record<string, SearchValue> = {};
  for (const entry of field.split(ENTRY_END)) {
    const at = entry.indexOf(NAME_END);
    out[entry.slice(0, at)] = parseMember(entry.slice(at + 1)).value;
  }
  return out;
}

/** A ZRANGEBYLEX range: `[min, max]` with their `[` / `(` / `-` / `+` marks. */
export type LexRange = readonly [min: string, max: string];

/** The members of every value of one kind. */
function kindRange(kind: string): LexRange {
  return [`[${kind}`, `(${String.fromCharCode(kind.charCodeAt(0) + 1)}`];
}

/**
 * The ranges of members a filter selects (each in the set's order): one per value for equality
 * and `in`, the values of the bound's kind on one side of it for a range. Members selected are
 * candidates; every filter is checked again on the values read.
 */
export function filterRanges(f: SearchFilter): LexRange[] {
  if (f.op === 'in') return f.values.map((v) => [`[${encodeValue(v)}${END}`, `(${encodeValue(v)}\u0002`]);
  const e = encodeValue(f.value);
  const [min, max] = kindRange(e[0]!);
  switch (f.op) {
    case 'eq':
      return [[`[${e}${END}`, `(${e}\u0002`]];
    case 'gt':
      return [[`[${e}\u0002`, max]];
    case 'gte':
      return [[`[${e}${END}`, max]];
    case 'lt':
      return [[min, `(${e}${END}`]];
    default:
      return [[min, `(${e}\u0002`]];
  }
}

/**
 * The ranges of one attribute's set that hold every instance its filters select: an equality's
 * value; a lower and an upper bound of one kind as one range between them (each bound alone would
 * select the whole rest of the kind); else the first `in`'s values or the first filter's range.
 */
export function attributeRanges(filters: readonly SearchFilter[]): LexRange[] {
  const eq = filters.find((f) => f.op === 'eq');
  if (eq) return filterRanges(eq);
  const bound = (ops: string[]) =>
    filters.find((f) => ops.includes(f.op)) as { value: SearchValue } | undefined;
  const lower = bound(['gt', 'gte']);
  const upper = bound(['lt', 'lte']);
  if (lower && upper && typeof lower.value === typeof upper.value)
    return [[filterRanges(lower as SearchFilter)[0]![0], filterRanges(upper as SearchFilter)[0]![1]]];
  return filterRanges(filters.find((f) => f.op === 'in') ?? filters[0]!);
}

/** Where a listing in a set's order resumes: just past (before, when `desc`) this value and id. */
export function afterBound(v: SearchValue, id: string): string {
  return `(${searchMember(v, id)}`;
}
