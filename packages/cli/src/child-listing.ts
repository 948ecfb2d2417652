import type { Snapshot, Status, Store } from '@stepfold/engine';
import { type ChildRef, mapChildId } from '@stepfold/engine';
import { UsageError } from './exit-codes.js';

// `stepfold children`: the child instances a parent started, read by id (a map's children are its
// prefix plus each dispatched index), a batch of loads at a time, a page at a time. A map of
// 100 000 items is listed without ever holding more than a page and a batch.

/** One child instance: where its parent started it, and its state in the store. */
export interface ChildRow {
  id: string;
  /** The parent's step that started it. */
  step: string;
  /** A map item's index. */
  item?: number | undefined;
  /** `missing`: not in the store (not started yet, or deleted). */
  status: Status | 'missing';
  workflow?: string | undefined;
  workflowVersion?: number | undefined;
  version?: number | undefined;
  updatedAt?: number | undefined;
  /** The child's error code and message, when it has one. */
  error?: string | undefined;
}

/** One page of children, and the cursor of the next (null on the last). */
export interface ChildPage {
  parent: string;
  items: ChildRow[];
  cursor: string | null;
  /** Children in all (child steps' and dispatched map items'), whatever the filters. */
  total: number;
  /** Children read for this page. */
  scanned: number;
}

/** What to list: a step's children only, a status only, a page size, where to resume, loads at once. */
export interface ChildQuery {
  step?: string | undefined;
  status?: Status | 'missing' | undefined;
  limit: number;
  cursor?: string | undefined;
  batch: number;
}

/** A child to load: its id and where the parent started it. */
interface Entry {
  id: string;
  step: string;
  item?: number | undefined;
}

/** Every child of `refs` by position, without listing them: child steps one each, maps by index. */
export function childEntries(refs: readonly ChildRef[]): { total: number; at(i: number): Entry } {
  const parts = refs.flatMap((ref): Array<{ ref: ChildRef; count: number }> => {
    if (ref.kind === 'child') return [{ ref, count: 1 }];
    if (ref.prefix === undefined) return [];
    return [{ ref, count: ref.progress.total - ref.progress.pending }];
  });
  const total = parts.reduce((n, p) => n + p.count, 0);
  return {
    total,
    at(i) {
      let rest = i;
      for (const { ref, count } of parts) {
        if (rest >= count) {
          rest -= count;
          continue;
        }
        if (ref.kind === 'child') return { id: ref.id, step: ref.step };
        return { id: mapChildId(ref.prefix!, rest), step: ref.step, item: rest };
      }
      throw new RangeError(`no child at ${i} of ${total}`);
    },
  };
}

function row(entry: Entry, s: Snapshot | null): ChildRow {
  if (!s) return { ...entry, status: 'missing' };
  return {
    ...entry,
    status: s.status,
    workflow: s.workflow.name,
    workflowVersion: s.workflow.version,
    version: s.version,
    updatedAt: s.updatedAt,
    ...(s.error ? { error: `${s.error.code ?? 'ERROR'}: ${s.error.message}` } : {}),
  };
}

/**
 * One page of `parent`'s children: from the cursor (a position), `batch` loads at a time, until
 * `limit` rows pass the status filter or the children run out; `progress` hears after each batch.
 * The cursor is the position after the last child read for the page, so nothing is skipped.
 */
export async function listChildren(
  store: Store,
  parent: Snapshot,
  refs: readonly ChildRef[],
  query: ChildQuery,
  progress: (scanned: number, left: number) => void = () => {},
): Promise<ChildPage> {
  const chosen = query.step === undefined ? refs : refs.filter((r) => r.step === query.step);
  const { total, at } = childEntries(chosen);
  let next = query.cursor === undefined ? 0 : Number(query.cursor);
  if (!Number.isInteger(next) || next < 0 || next > total) {
    throw new UsageError(`--cursor ${query.cursor}: not a position among ${total} children`);
  }
  const items: ChildRow[] = [];
  let scanned = 0;
  while (next < total && items.length < query.limit) {
    // Unfiltered, read no further than the page needs; filtered, a whole batch (most may not match).
    const want = query.status === undefined ? query.limit - items.length : query.batch;
    const entries = Array.from({ length: Math.min(query.batch, want, total - next) }, (_, i) => at(next + i));
    const loaded = await Promise.all(entries.map((e) => store.load(e.id)));
    for (let i = 0; i < entries.length; i++) {
      next++;
      scanned++;
      const r = row(entries[i]!, loaded[i]!);
      if (query.status === undefined || r.status === query.status) items.push(r);
      if (items.length === query.limit) break; // the rest of the batch is read again next page
    }
    progress(scanned, total - next);
  }
  return { parent: parent.id, items, cursor: next < total ? String(next) : null, total, scanned };
}
