import {
  checkSearch,
  isValidId,
  matchesSearch,
  parseWhere,
  type Snapshot,
  type Status,
  type Store,
  type WhereCondition,
} from '@stepfold/engine';
import { STATUSES } from './views/format.js';
import type { ListFilters } from './views/list-page.js';

/**
 * Rows a time-filtered or top-level list reads at most per page, as a multiple of the page size.
 * Stores list by id, not by time or parent (`ListQuery` has neither), so those filters are applied
 * to the rows read; the bound keeps one page's cost known, and the next-page link continues the scan.
 */
export const SCAN_PAGES = 20;

/**
 * A time filter's value as epoch ms: a `datetime-local` value (`2026-11-26T14:05`, read as UTC
 * like every time the inspector shows), an ISO time with a zone, or epoch ms. Undefined when empty
 * or unreadable (an unreadable filter is dropped rather than guessed).
 */
export function parseTime(raw: string | undefined): number | undefined {
  const v = raw?.trim();
  if (!v) return undefined;
  if (/^\d{1,15}$/.test(v)) return Number(v);
  const zoned = /(Z|[+-]\d\d:?\d\d)$/i.test(v) ? v : `${v}Z`;
  const ms = Date.parse(zoned);
  return Number.isFinite(ms) ? ms : undefined;
}

/** Longest attribute filter text read; longer text is cut (a filter bar, not a query language). */
const MAX_WHERE = 1000;

/**
 * The attribute filter's conditions: separated by spaces outside double quotes
 * (`customerId=42 total>=100 city="New York"`), each read by the engine's `parseWhere`.
 * `INVALID_QUERY` for text that is not conditions.
 */
export function whereOfText(text: string): Record<string, WhereCondition> {
  const parts = text.match(/(?:[^\s"]+|"(?:[^"\\]|\\.)*")+/g) ?? [];
  return parseWhere(parts);
}

/** The list filters from a query string; values that cannot match anything are dropped. */
export function readFilters(query: Record<string, string | undefined>): ListFilters {
  const pick = (name: string) => {
    const v = query[name]?.trim();
    return v && isValidId(v) ? v : undefined;
  };
  const status = query['status']?.trim();
  const workflow = pick('workflow');
  const prefix = pick('prefix');
  const cursor = pick('cursor');
  const since = parseTime(query['since']);
  const before = parseTime(query['before']);
  const top = query['top']?.trim();
  const where = query['where']?.trim().slice(0, MAX_WHERE);
  return {
    ...(status && (STATUSES as readonly string[]).includes(status) ? { status } : {}),
    ...(workflow ? { workflow } : {}),
    ...(prefix ? { prefix } : {}),
    ...(cursor ? { cursor } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(before !== undefined ? { before } : {}),
    ...(top === '1' || top === 'on' || top === 'true' ? { topLevel: true } : {}),
    ...(where ? { where } : {}),
  };
}

/** One page of the list: the instances, the cursor of the next page, and whether a scan bound cut it short. */
export interface ListResult {
  items: Snapshot[];
  next: string | null;
  /** Rows read and passed over by the time or top-level filter before the page was cut at the scan bound. */
  scanned?: number | undefined;
}

/**
 * One page of instances for the filters, and the cursor of the next page (null on the last). The
 * attribute filter (`where`) is the store's to apply, by its indexes; `INVALID_QUERY` when its text
 * is not conditions.
 */
export async function listInstances(store: Store, filters: ListFilters, limit: number): Promise<ListResult> {
  const where = filters.where ? whereOfText(filters.where) : undefined;
  const search = where ? checkSearch(where, undefined) : undefined;
  const base = {
    ...(filters.status ? { status: filters.status as Status } : {}),
    ...(filters.workflow ? { workflow: filters.workflow } : {}),
    ...(where ? { where } : {}),
  };
  const { prefix, since, before, topLevel } = filters;
  // Filters the store cannot apply: checked on the rows read, within the scan bound.
  const scanning = since !== undefined || before !== undefined || topLevel === true;
  const kept = (s: Snapshot) =>
    (since === undefined || s.updatedAt >= since) &&
    (before === undefined || s.updatedAt < before) &&
    (!topLevel || s.parent === undefined);
  const items: Snapshot[] = [];
  // Stores list ids in order after the cursor (the last id of the previous page), so the ids with
  // the prefix are one run that starts right after the prefix itself: list from there and stop at
  // the first id without it. Only an id equal to the prefix is not after it; that one is loaded.
  let cursor = prefix && !(filters.cursor && filters.cursor > prefix) ? prefix : (filters.cursor ?? null);
  if (prefix && !filters.cursor) {
    const exact = await store.load(prefix);
    const matches =
      exact &&
      (!base.status || exact.status === base.status) &&
      (!base.workflow || exact.workflow.name === base.workflow) &&
      (!search ||
        matchesSearch(
          { status: exact.status, workflow: exact.workflow.name, search: exact.search ?? null },
          search,
        )) &&
      kept(exact);
    if (matches) items.push(exact);
  }
  const inRun = (s: Snapshot | undefined) => s !== undefined && (!prefix || s.id.startsWith(prefix));
  const cap = limit * SCAN_PAGES;
  let scanned = 0;
  for (;;) {
    const page = await store.list({ ...base, limit, cursor });
    for (let i = 0; i < page.items.length; i++) {
      const s = page.items[i]!;
      if (!inRun(s)) return { items, next: null };
      scanned++;
      if (kept(s)) items.push(s);
      const full = items.length === limit;
      if (full || (scanning && scanned >= cap)) {
        const after = page.items[i + 1];
        const more = after ? inRun(after) : page.cursor !== null;
        return { items, next: more ? s.id : null, ...(full || !more ? {} : { scanned }) };
      }
    }
    if (page.cursor === null) return { items, next: null };
    cursor = page.cursor;
  }
}
