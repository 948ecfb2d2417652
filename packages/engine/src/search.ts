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

/** Why `v` does not fit an attribute of `type`, or undefined when it does. */
export function searchValueProblem(type: SearchType, v: unknown): string | undefined {
  const ok =
    type === 'string'
      ? typeof v === 'string' && v.length <= MAX_SEARCH_TEXT
      : type === 'number'
        ? typeof v === 'number' && Number.isFinite(v)
        : type === 'time'
          ? Number.isSafeInteger(v)
          : typeof v === 'boolean';
  if (ok) return undefined;
  const found =
    typeof v === 'string' ? `a string of ${v.length} characters` : (JSON.stringify(v) ?? typeof v);
  const want =
    type === 'string'
      ? `a string of at most ${MAX_SEARCH_TEXT} characters`
      : type === 'time'
        ? 'an integer (epoch ms)'
        : type === 'number'
          ? 'a finite number'
          : 'a boolean';
  return `must be ${want}; found ${typeof v === 'object' && v !== null ? 'an object' : found.slice(0, 60)}`;
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

/** Whether `v` is what a handler sets: like {@link isSearchRecord}, with `null` to clear a value. */
export function isSearchUpdate(v: unknown): v is Record<string, SearchValue | null> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const kept: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const x = (v as Record<string, unknown>)[k];
    if (x !== null) kept[k] = x;
    else if (!isSearchName(k)) return false;
  }
  return Object.keys(v).length <= MAX_SEARCH_ATTRIBUTES && isSearchRecord(kept);
}

/**
 * Problems with a definition's `search` declarations (empty when fine): names, types, at most
 * {@link MAX_SEARCH_ATTRIBUTES}, and each `from` an `input.…` or `outputs.<step>.…` path of a step
 * the definition has.
 */
export function searchDeclarationIssues(search: unknown, steps: Readonly<Record<string, unknown>>): Issue[] {
  if (search === undefined) return [];
  if (typeof search !== 'object' || search === null || Array.isArray(search))
    return [{ path: 'search', message: 'must be an object of attributes by name' }];
  const out: Issue[] = [];
  const names = Object.keys(search);
  if (names.length > MAX_SEARCH_ATTRIBUTES)
    out.push({ path: 'search', message: `at most ${MAX_SEARCH_ATTRIBUTES} attributes` });
  for (const name of names) {
    const at = `search.${name}`;
    if (!isSearchName(name))
      out.push({
        path: at,
        message: `name must be a letter then letters, digits or _ (at most 63), not ${[...BUILT_IN_FIELDS].join(', ')}`,
      });
    const a = (search as Record<string, unknown>)[name] as Partial<SearchAttribute> | null;
    if (typeof a !== 'object' || a === null) {
      out.push({ path: at, message: 'must be { type, from? }' });
      continue;
    }
    for (const k of Object.keys(a))
      if (k !== 'type' && k !== 'from') out.push({ path: `${at}.${k}`, message: 'unknown field' });
    if (!TYPES.has(a.type as string))
      out.push({ path: `${at}.type`, message: 'must be string, number, boolean or time' });
    if (a.from === undefined) continue;
    const parts = typeof a.from === 'string' ? a.from.split('.') : [];
    const ok =
      parts.every((p) => p !== '' && p !== '__proto__' && p !== 'constructor' && p !== 'prototype') &&
      ((parts[0] === 'input' && parts.length >= 1) || (parts[0] === 'outputs' && parts.length >= 2));
    if (!ok) out.push({ path: `${at}.from`, message: 'must be an input.… or outputs.<step>.… path' });
    else if (parts[0] === 'outputs' && !Object.hasOwn(steps, parts[1]!))
      out.push({ path: `${at}.from`, message: `no step "${parts[1]}"` });
  }
  return out;
}
