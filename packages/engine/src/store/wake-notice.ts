import type { Snapshot } from '../snapshot.js';

/**
 * The `wakeAt` a write should announce on a store's wake channel, or null. Announced: a timer (a
 * retry backoff, a sleep, a timeout) or a task handed off for any worker to take. Not announced:
 * no wake time, a finished instance, or a wake time that is only a running task's deadline — the
 * runner that dispatched the task is running it, and only its crash lets the deadline pass.
 *
 * @example
 * const notice = wakeNotice(snapshot); // e.g. in a save: `if (notice !== null) publish(notice)`
 */
export function wakeNotice(snapshot: Snapshot): number | null {
  const at = snapshot.wakeAt;
  if (typeof at !== 'number' || !Number.isFinite(at)) return null;
  for (const t of snapshot.timers) if (t.at === at) return at;
  for (const key in snapshot.tasks) {
    const t = snapshot.tasks[key]!;
    if (t.queued && t.deadline === at) return at;
  }
  return null;
}

/**
 * Whether the notice `at` of `snapshot` hands a task to any worker (a task queued with that
 * deadline, due at once), rather than announcing a timer. A store may send the snapshot with such
 * a notice so the worker that hears it first takes the task without a claim or a load.
 */
export function isHandoffNotice(snapshot: Snapshot, at: number): boolean {
  for (const key in snapshot.tasks) {
    const t = snapshot.tasks[key]!;
    if (t.queued && t.deadline === at) return true;
  }
  return false;
}
