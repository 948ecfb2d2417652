import { ValidationError } from '../errors.js';
import { isTerminal } from '../snapshot.js';
import type { Store } from '../store/store.js';
import type { PayloadStore } from './payload-store.js';
import { payloadRefs } from './payload-walk.js';

/**
 * Deletes an instance and then every payload it owns; resolves with whether the instance existed.
 * Its children are instances of their own (their ids are not this one's payload owners): delete
 * them too. Retention calls it for each instance it expires.
 *
 * @example
 * await deleteInstance(store, payloadStore, 'order-42');
 */
export async function deleteInstance(store: Store, payloads: PayloadStore, id: string): Promise<boolean> {
  // The instance first: while it exists, a payload it references is never missing.
  const existed = await store.delete(id);
  await payloads.deleteOwner(id);
  return existed;
}

/** Options of {@link collectPayloads}. */
export interface CollectOptions {
  /**
   * Collect for an instance that is not finished too (default false): a running instance may have
   * a payload put but not yet written (a handler's result on its way) or referenced by a signal
   * still in its inbox, which collecting would remove. Only when nothing drives it.
   */
  running?: boolean | undefined;
  /** Hashes listed per page (default 500). */
  pageSize?: number | undefined;
}

/**
 * Removes the payloads an instance owns that its snapshot no longer references — left by a loop's
 * earlier iterations, a retried output whose write lost, an id started over — and resolves with
 * how many went. An instance that no longer exists loses all of them. A running instance is left
 * alone unless `running` says otherwise (see {@link CollectOptions.running}).
 *
 * @example
 * const removed = await collectPayloads(store, payloadStore, 'order-42');
 */
export async function collectPayloads(
  store: Store,
  payloads: PayloadStore,
  id: string,
  options: CollectOptions = {},
): Promise<number> {
  const s = await store.load(id);
  if (!s) return payloads.deleteOwner(id);
  if (!isTerminal(s.status) && !options.running) return 0;
  // References inside encoded data are out of sight: collecting would remove live payloads.
  if (JSON.stringify(s).includes('"$enc"'))
    throw new ValidationError('INVALID_OPTIONS', 'collectPayloads cannot read an encrypted snapshot', [
      {
        path: 'store',
        message: 'pass the store of the runner with the codec (runner.store), which decodes it',
      },
    ]);
  const live = new Set(payloadRefs(s).flatMap((r) => (r.owner === id ? [r.sha256] : [])));
  const limit = options.pageSize ?? 500;
  const orphans: string[] = [];
  for (let cursor: string | null = null; ; ) {
    const page = await payloads.list(id, { limit, cursor });
    for (const h of page.items) if (!live.has(h)) orphans.push(h);
    if (page.cursor === null) break;
    cursor = page.cursor;
  }
  let removed = 0;
  for (let i = 0; i < orphans.length; i += limit)
    removed += await payloads.delete(id, orphans.slice(i, i + limit));
  return removed;
}
