import type { Issue } from './errors.js';

// Search attributes: small typed values an instance carries (`Snapshot.search`) so that every store
// can index them and `store.list({ where })` filters on the server. The declarations live on the
// definition; the checks here are shared by the definition, the reducer, the runner and the stores.

/**
 * The type of a search attribute. Four, because they are what every store can index and order
 * alike (a text column, a number column, a flag): `time` is epoch ms, stored as a number but
 * shown and parsed as a date by the CLI and the inspector. No arrays or objects: they index differently everywhere.
 */
export type SearchType = 'string' | 'number' | 'boolean' | 'time';

/** A stored attribute value: `time` is a number (epoch ms). */
export type SearchValue = string | number | boolean;

/** One declared attribute: its type, and the data path it is read from (none: a handler sets it). */
export interface SearchAttribute {
  type: SearchType;
  /** `input.…` or `outputs.<step>.…`; absent: set by handlers with `ctx.setAttributes`. */
  from?: string | undefined;
}

/** A workflow's declared attributes, by name. */
export type SearchDeclarations = Readonly<Record<string, SearchAttribute>>;

/** Most attributes one workflow declares (every one is a row or index entry on each write that changes it). */
export const MAX_SEARCH_ATTRIBUTES = 16;

/** The longest string value, in UTF-16 units: long enough for ids and emails, short enough for every index. */
export const MAX_SEARCH_TEXT = 256;

/** Names the stores already filter and order by: not attribute names. */
export const BUILT_IN_FIELDS: ReadonlySet<string> = new Set([
  'id',
  'workflow',
  'status',
  'createdAt',
  'updatedAt',
]);

const NAME = /^[A-Za-z][A-Za-z0-9_]{0,62}$/;
const TYPES: ReadonlySet<string> = new Set(['string', 'number', 'boolean', 'time']);

/** Whether `name` can be an attribute's name: a letter then letters, digits or `_` (63 at most), not a built-in. */
export function isSearchName(name: unknown): name is string {
  return typeof name === 'string' && NAME.test(name) && !BUILT_IN_FIELDS.has(name);
}

/** Whether `v` is a value some attribute can hold: a short string, a finite number or a boolean. */
export function isSearchValue(v: unknown): v is SearchValue {
  return (
    typeof v === 'boolean' ||
    (typeof v === 'number' && Number.isFinite(v)) ||
    (typeof v === 'string' && v.length <= MAX_SEARCH_TEXT)
  );
}

/** What a value of each type must be, as a test and as words. */
const WANTS: Record<SearchType, [(v: unknown) => boolean, string]> = {
  string: [
    (v) => typeof v === 'string' && v.length <= MAX_SEARCH_TEXT,
    `a string of at most ${MAX_SEARCH_TEXT} characters`,
  ],
  number: [(v) => typeof v === 'number' && Number.isFinite(v), 'a finite number'],
  time: [(v) => Number.isSafeInteger(v), 'an integer (epoch ms)'],
  boolean: [(v) => typeof v === 'boolean', 'a boolean'],
};

/** Why `v` does not fit an attribute of `type`, or undefined when it does. */
export function searchValueProblem(type: SearchType, v: unknown): string | undefined {
  const [ok, want] = WANTS[type];
  return ok(v) ? undefined : `must be ${want}; found ${typeof v}`;
}

/**
 * Problems with values set for `declared` attributes (`null` clears one): each must be declared,
 * without `from`, and fit its type. Shared by `ctx.setAttributes` and the reducer.
 */
export function setIssues(declared: SearchDeclarations, values: Readonly<Record<string, unknown>>): Issue[] {
  const out: Issue[] = [];
  for (const name of Object.keys(values)) {
    const a = Object.hasOwn(declared, name) ? declared[name] : undefined;
    const v = values[name];
    const problem =
      a === undefined
        ? 'is not declared'
        : a.from !== undefined
          ? `is read from ${a.from}`
          : v === null
            ? undefined
            : searchValueProblem(a.type, v);
    if (problem) out.push({ path: `search.${name}`, message: problem });
  }
  return out;
}

/** Whether `v` is a snapshot's `search` field: a plain object of named values, at most {@link MAX_SEARCH_ATTRIBUTES}. */
export function isSearchRecord(v: unknown): v is Record<string, SearchValue> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  let n = 0;
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    if (++n > MAX_SEARCH_ATTRIBUTES || !isSearchName(k) || !isSearchValue((v as Record<string, unknown>)[k]))
      return false;
  }
  return true;
}

/**
 * Whether `v` is an object of values some attribute can hold (and `null`, which clears one, when
 * `clears`): the cheap check of the core (events, loaded snapshots). Names and types against the
 * declarations are checked by `searchAttributes`.
 */
export function isSearchValues(v: unknown, clears?: boolean): boolean {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    Object.values(v).every((x) => (clears && x === null) || isSearchValue(x))
  );
}

/**
 * Problems with a definition's `search` declarations (empty when fine): names, types, at most
 * {@link MAX_SEARCH_ATTRIBUTES}, and each `from` an `input.…` or `outputs.<step>.…` path of a step
 * the definition has.
 */
export function searchDeclarationIssues(search: unknown, steps: Readonly<Record<string, unknown>>): Issue[] {
  if (search === undefined) return [];
  const out: Issue[] = [];
  const bad = (path: string, message: string) => out.push({ path, message });
  const entries = typeof search === 'object' && search !== null ? Object.entries(search) : [];
  if (typeof search !== 'object' || search === null || entries.length > MAX_SEARCH_ATTRIBUTES)
    bad('search', `must declare at most ${MAX_SEARCH_ATTRIBUTES} attributes by name`);
  for (const [name, a] of entries) {
    const at = `search.${name}`;
    if (!isSearchName(name))
      bad(at, 'must be a letter then letters, digits or _ (63 at most), not a built-in');
    const { type, from, ...rest } = (a ?? {}) as Partial<SearchAttribute>;
    if (Object.keys(rest).length || !TYPES.has(type as string))
      bad(at, 'must be { type: string | number | boolean | time, from? }');
    if (from === undefined) continue;
    const parts = String(from).split('.');
    const ok =
      typeof from === 'string' &&
      !parts.some((p) => p === '' || p === '__proto__' || p === 'constructor' || p === 'prototype') &&
      (parts[0] === 'input' || (parts[0] === 'outputs' && Object.hasOwn(steps, parts[1] ?? '')));
    if (!ok) bad(`${at}.from`, 'must be an input.… path or outputs.<step>.… of a step');
  }
  return out;
}
