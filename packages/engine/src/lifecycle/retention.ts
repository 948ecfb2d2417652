import { isStepfoldError } from '../errors.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import { isTerminal, type Snapshot, TERMINAL_STATUSES } from '../snapshot.js';
import type { Store } from '../store/store.js';
import type { StreamStore, StreamWriter } from '../store/stream.js';

// Retention: finished instances older than a period leave the store, deleted or archived to
// another store. Every removal is a conditional delete at the version the sweep read, so an
// instance restarted meanwhile (a reuseFinished start saves over it, raising its version) stays.
// A finished child stays while any parent up its chain has not finished: that parent's rollback
// reverts it (a cancel, a later step failing), and a deleted child would leave it in dlq.

/** Deepest parent chain followed; a longer one (or a cycle, in corrupt data) keeps the child. */
const MAX_ANCESTORS = 64;

/** Options of {@link sweepRetention}. */
export interface RetentionOptions {
  /** The store to sweep (a tiered store too: its `list` and `delete` cover both tiers). */
  store: Store;
  /** Finished instances whose last update is older than `now - olderThanMs` go. */
  olderThanMs: number;
  /** The sweep's clock (epoch ms). */
  now: number;
  /**
   * `'delete'`: removed, with their payloads and streams. `{ archive }`: created in the archive
   * store (one a previous sweep archived at an older version is overwritten), their streams copied
   * to its streams where both stores keep them, then removed; their payloads stay, since the
   * archived snapshots still refer to them (delete them when deleting from the archive).
   */
  action: 'delete' | { archive: Store };
  /** Where the instances' large values live: an owner's payloads go with a deleted instance. */
  payloads?: PayloadStore | undefined;
  /** Only this workflow's instances. */
  workflow?: string | undefined;
  /** Instances removed in this call, at most (default 1000): call again while `more` is true. */
  limit?: number | undefined;
}

/** What one {@link sweepRetention} call did. */
export interface RetentionResult {
  /** Instances deleted (not archived). */
  deleted: number;
  /** Instances archived, then removed. */
  archived: number;
  /** Payloads deleted with their instances. */
  payloads: number;
  /** Removals a concurrent write won (the instance changed after the sweep read it): it stays. */
  conflicts: number;
  /** Finished children kept because a parent up their chain has not finished (its rollback may revert them). */
  keptChildren: number;
  /** True when the call stopped at `limit` with more to look at. */
  more: boolean;
}

/** Archives `s`: created, or written over an older archived copy; false if the archive holds a newer one. */
async function archiveCopy(archive: Store, s: Snapshot): Promise<boolean> {
  try {
    await archive.create(s);
    return true;
  } catch (e) {
    if (!isStepfoldError(e, 'ALREADY_EXISTS')) throw e;
  }
  const held = await archive.load(s.id);
  if (held === null) return archiveCopy(archive, s);
  if (held.version > s.version) return false;
  if (held.version < s.version) await archive.save(s, held.version);
  return true;
}

/**
 * Copies the instance's stream (what reads show of it: every attempt's chunks but superseded ones)
 * to the archive's, replacing any copy an interrupted sweep left.
 */
async function archiveStream(from: StreamStore, to: StreamStore, id: string): Promise<void> {
  await to.remove(id);
  // Typed by assertion: the loop below assigns it, which narrowing from `null` would not see.
  let writer = null as { key: string; w: StreamWriter } | null;
  for (let next = 0; ; ) {
    const page = await from.read(id, { from: next });
    for (const e of page.entries) {
      const key = JSON.stringify([e.step, e.attempt]);
      if (writer?.key !== key) {
        await writer?.w.close();
        writer = { key, w: to.writer(id, e.step, e.attempt, { delayMs: 60_000 }) };
      }
      if (e.type === 'reset') await to.begin(id, e.step, e.attempt);
      else writer.w.write(e.data);
    }
    next = page.next;
    if (page.end) break;
  }
  await writer?.w.close();
}

/**
 * Deletes or archives finished instances (completed, failed, cancelled, aborted) whose `updatedAt`
 * is older than `now - olderThanMs`, paging over `store.list` by status. Each removal is
 * conditional on the version read, so nothing restarted or changed meanwhile is lost. A child
 * whose parent (or a parent above it) has not finished stays, for that parent's rollback.
 *
 * @example
 * const r = await sweepRetention({ store, olderThanMs: 30 * 86_400_000, now: Date.now(), action: 'delete', payloads });
 * console.log(`${r.deleted} deleted`);
 */
export async function sweepRetention(o: RetentionOptions): Promise<RetentionResult> {
  const { store, now, olderThanMs } = o;
  const limit = o.limit ?? 1000;
  if (!(Number.isSafeInteger(olderThanMs) && olderThanMs >= 0))
    throw new RangeError('sweepRetention: olderThanMs must be a non-negative integer');
  if (!(Number.isSafeInteger(limit) && limit >= 1))
    throw new RangeError('sweepRetention: limit must be a positive integer');
  const cutoff = now - olderThanMs;
  const archive = o.action === 'delete' ? undefined : o.action.archive;
  const result: RetentionResult = {
    deleted: 0,
    archived: 0,
    payloads: 0,
    conflicts: 0,
    keptChildren: 0,
    more: false,
  };
  const removed = () => result.deleted + result.archived;

  // Per instance id: whether it and every parent above it have finished (or are gone). Kept for
  // the sweep: a finished instance never runs again, except a reuseFinished restart, whose new
  // run starts children with new ids.
  const finishedLine = new Map<string, Promise<boolean>>();
  const lineFinished = (id: string, depth: number): Promise<boolean> => {
    if (depth > MAX_ANCESTORS) return Promise.resolve(false);
    let known = finishedLine.get(id);
    if (!known) {
      known = store
        .load(id)
        .then((p) =>
          p === null ? true : isTerminal(p.status) && (!p.parent || lineFinished(p.parent.id, depth + 1)),
        );
      finishedLine.set(id, known);
    }
    return known;
  };

  const sweepOne = async (s: Snapshot) => {
    if (s.parent && !(await lineFinished(s.parent.id, 1))) {
      result.keptChildren++;
      return;
    }
    if (archive && !(await archiveCopy(archive, s))) {
      result.conflicts++;
      return;
    }
    // The stream goes with its instance: copied to the archive (when both keep streams) before the
    // delete below removes it.
    if (archive?.stream && store.stream) await archiveStream(store.stream, archive.stream, s.id);
    const gone = await store.delete(s.id, { version: s.version }).catch((e: unknown) => {
      if (isStepfoldError(e, 'VERSION_CONFLICT')) return false;
      throw e;
    });
    if (!gone) {
      // Changed or removed since the read: it stays (an archived copy is harmless: a later sweep
      // overwrites it with the version that finally goes).
      result.conflicts++;
      return;
    }
    if (archive) result.archived++;
    else {
      result.deleted++;
      // After the instance, never before: a failed payload delete leaks bodies, it breaks no instance.
      if (o.payloads) result.payloads += await o.payloads.deleteOwner(s.id);
    }
  };

  for (const status of TERMINAL_STATUSES) {
    let cursor: string | null = null;
    do {
      const page = await store.list({ status, workflow: o.workflow, limit: 100, cursor });
      cursor = page.cursor;
      const old = page.items.filter((s) => s.updatedAt < cutoff);
      for (const s of old) {
        if (removed() >= limit) {
          result.more = true;
          return result;
        }
        await sweepOne(s);
      }
    } while (cursor !== null);
  }
  return result;
}
