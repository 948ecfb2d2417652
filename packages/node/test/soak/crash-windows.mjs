// @ts-check
// The composition crash windows, hit on purpose: a soak worker process (SOAK_CRASH_EVERY set) wraps
// its store so that, right after a write lands, it SIGKILLs itself when that write opened one of
// the two windows child workflows have, on a sample of instances:
//
// - `dispatch`: the parent's write that hands this process a child to start (a `$child` task it
//   dispatched or took, attempt 1), before the child's create. The parent's task deadline must
//   bring it back: the next attempt's writer creates the child.
// - `ended`: a child's terminal write, before its end reaches the parent (the inbox send or write
//   of `child.ended`). The parent's task deadline must bring it back: the next attempt's writer
//   finds the child ended and reports it.
//
// Test code only: the library's path is unchanged, the wrapper sits between the runner and the
// store of the soak's own worker processes.
import { isTerminal } from '@stepfold/engine';
import { hash } from './workflows.mjs';

/**
 * @typedef {import('@stepfold/engine').Snapshot} Snapshot
 * @typedef {import('@stepfold/engine').Store} Store
 * @typedef {'dispatch' | 'ended'} CrashWindow
 */

/**
 * The window `s`, just written, opens for its writer, if sampled (one in `every`, by a hash of the
 * child's key, so a window is hit at most once per child and attempt 1 only): else null.
 * @param {Snapshot} s @param {number} every
 * @returns {{ window: CrashWindow, key: string } | null}
 */
export function crashWindow(s, every) {
  if (every < 1) return null;
  const sampled = (/** @type {string} */ key) => hash(key) % every === 0;
  if (s.parent && isTerminal(s.status)) {
    const key = `${s.id}#${s.status}`;
    return sampled(`ended ${key}`) ? { window: 'ended', key } : null;
  }
  for (const t of Object.values(s.tasks)) {
    // Dispatched (or taken) by this very write, for this writer to start: not queued for another.
    if (t.handler !== '$child' || t.phase !== 'run' || t.queued || t.detached) continue;
    if (t.dispatchVersion !== s.version || t.attempt !== 1) continue;
    if (sampled(`dispatch ${t.idempotencyKey}`)) return { window: 'dispatch', key: t.idempotencyKey };
  }
  return null;
}

/**
 * `store` with every create and save followed by {@link crashWindow}: when it names a window,
 * `record` is called (a synchronous log write) and the process SIGKILLs itself before anything else
 * runs, as a kill -9 from outside would at that instant.
 * @param {Store} store @param {number} every
 * @param {(id: string, window: CrashWindow, key: string) => void} record
 * @returns {Store}
 */
export function crashingStore(store, every, record) {
  /** @param {Snapshot} s */
  const after = (s) => {
    const hit = crashWindow(s, every);
    if (!hit) return;
    record(s.id, hit.window, hit.key);
    process.kill(process.pid, 'SIGKILL');
  };
  return Object.assign(Object.create(store), {
    /** @param {Snapshot} s */
    async create(s) {
      await store.create(s);
      after(s);
    },
    /** @param {Parameters<Store['save']>} a */
    async save(...a) {
      await store.save(...a);
      after(a[0]);
    },
  });
}
