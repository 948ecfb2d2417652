import type { Snapshot } from '../snapshot.js';
import { admitSnapshot } from '../snapshot-format.js';
import type { Store } from '../store/store.js';

/**
 * Loads an instance the way every runner read goes: whatever the `Store` (a kit-built adapter or a
 * hand-written one) hands back is upgraded to the current format and checked (its envelope, its id)
 * before the engine uses it; `INVALID_SNAPSHOT` otherwise.
 */
export async function loadInstance(store: Store, id: string): Promise<Snapshot | null> {
  const s = await store.load(id);
  return s === null || s === undefined ? null : admitSnapshot(s, id);
}
