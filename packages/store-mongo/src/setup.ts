import type { StoreKit } from '@stepfold/engine';
import type { Collection, IndexDescription } from 'mongodb';
import type { InstanceDocument } from './encode.js';

/**
 * The indexes the store's queries rely on: due time (all workflows, and one workflow's lane: an
 * equality prefix then the same order), and id-ordered listing by status or workflow.
 */
export const INSTANCE_INDEXES: IndexDescription[] = [
  { key: { wakeAt: 1, _id: 1 }, name: 'stepfold_wake_at' },
  { key: { workflow: 1, wakeAt: 1, _id: 1 }, name: 'stepfold_lane' },
  { key: { status: 1, _id: 1 }, name: 'stepfold_status' },
  { key: { workflow: 1, _id: 1 }, name: 'stepfold_workflow' },
];

/**
 * Creates the collection's indexes; creating an index that exists with the same spec is a no-op, so
 * this is idempotent. One index per command: FerretDB 1.x crashes the connection when a single
 * `createIndexes` names several indexes that all exist already.
 */
export async function ensureIndexes(
  collection: Collection<InstanceDocument>,
  guard: StoreKit['guard'],
): Promise<void> {
  for (const index of INSTANCE_INDEXES) {
    await guard('setup', () => collection.createIndexes([index]));
  }
}

const COLLECTION_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,119}$/;

/** Throws unless `name` is a plain collection name (no `$`, no `system.` prefix, at most 120 chars). */
export function assertCollectionName(name: string): void {
  if (!COLLECTION_NAME.test(name) || name.startsWith('system.')) {
    throw new TypeError(`invalid MongoDB collection name ${JSON.stringify(name)}`);
  }
}
