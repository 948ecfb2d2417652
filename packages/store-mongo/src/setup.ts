import type { Collection, IndexDescription } from 'mongodb';
import type { InstanceDocument } from './encode.js';
import { backfillDueAt } from './upgrade.js';

/** Name of the due index; its absence tells `setup` the collection may hold documents without `dueAt`. */
export const DUE_INDEX = 'stepfold_due';

/**
 * The indexes the store's queries rely on: due order (all workflows, and one workflow's lane: an
 * equality prefix then the same order), id-ordered listing by status or workflow, and the inbox's
 * own claim (earliest waiting signal first).
 */
export const INSTANCE_INDEXES: IndexDescription[] = [
  { key: { dueAt: 1, _id: 1 }, name: DUE_INDEX },
  { key: { workflow: 1, dueAt: 1, _id: 1 }, name: 'stepfold_due_lane' },
  { key: { status: 1, _id: 1 }, name: 'stepfold_status' },
  { key: { workflow: 1, _id: 1 }, name: 'stepfold_workflow' },
  { key: { sentDueAt: 1, _id: 1 }, name: 'stepfold_sent_due' },
  // Search attributes: an encoded entry per attribute (multikey), so `where` reads string ranges.
  { key: { sa: 1, _id: 1 }, name: 'stepfold_search' },
];

/**
 * The due indexes of versions before `dueAt` (keyed on `wakeAt`). Their presence also means such a
 * version set the collection up (again, after a rollback) and may have written documents without
 * `dueAt`.
 */
export const LEGACY_INDEXES: readonly string[] = ['stepfold_wake_at', 'stepfold_lane'];

/**
 * Creates the collection's indexes; creating an index that exists with the same spec is a no-op, so
 * this is idempotent. One index per command: FerretDB 1.x crashes the connection when a single
 * `createIndexes` names several indexes that all exist already.
 *
 * On a collection that lacks the due index or still has a legacy one, it first fills in `dueAt` on
 * the documents without it, and drops the legacy indexes last: a run cut short anywhere is redone
 * by the next one.
 */
export async function ensureIndexes(collection: Collection<InstanceDocument>): Promise<void> {
  const names = new Set((await indexNames(collection)) ?? []);
  const legacy = LEGACY_INDEXES.filter((name) => names.has(name));
  if (!names.has(DUE_INDEX) || legacy.length > 0) await backfillDueAt(collection);
  for (const index of INSTANCE_INDEXES) await collection.createIndexes([index]);
  for (const name of legacy) {
    await collection.dropIndex(name).catch((e: unknown) => {
      if (codeOf(e) !== INDEX_NOT_FOUND) throw e; // another process's setup dropped it first
    });
  }
}

const NAMESPACE_NOT_FOUND = 26;
const INDEX_NOT_FOUND = 27;

function codeOf(e: unknown): unknown {
  return typeof e === 'object' && e !== null && 'code' in e ? e.code : undefined;
}

// The collection's index names, or null when the collection does not exist yet.
async function indexNames(collection: Collection<InstanceDocument>): Promise<string[] | null> {
  try {
    const indexes = await collection.indexes();
    return indexes.flatMap((i) => (typeof i.name === 'string' ? [i.name] : []));
  } catch (e) {
    if (codeOf(e) === NAMESPACE_NOT_FOUND) return null;
    throw e;
  }
}

const COLLECTION_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,119}$/;

/** Whether `name` is a plain collection name (no `$`, no `system.` prefix, at most 120 chars). */
export function isCollectionName(name: string): boolean {
  return COLLECTION_NAME.test(name) && !name.startsWith('system.');
}

/** Throws unless `name` is a plain collection name (see {@link isCollectionName}). */
export function assertCollectionName(name: string): void {
  if (!isCollectionName(name)) {
    throw new TypeError(`invalid MongoDB collection name ${JSON.stringify(name)}`);
  }
}
