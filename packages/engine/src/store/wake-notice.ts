import { isValidId } from '../ids.js';
import type { Snapshot } from '../snapshot.js';
import type { WakeNotice } from './store.js';

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
  // Indexed: V8 walks a frozen array with for-of through an iterator object, and this runs per write.
  const timers = snapshot.timers;
  for (let i = 0; i < timers.length; i++) if (timers[i]!.at === at) return at;
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

/**
 * Whether the notice `at` of `snapshot` announces a timer while a task of the instance is running:
 * the runner running it will write again, so a snapshot loaded now may be stale by the timer. A
 * worker that hears such a notice for another's write waits for the time before it claims.
 */
export function isBusyNotice(snapshot: Snapshot, at: number): boolean {
  return !isHandoffNotice(snapshot, at) && hasRunningTask(snapshot);
}

/** Whether a task of the instance is running (dispatched to a runner, not queued for any worker). */
export function hasRunningTask(snapshot: Snapshot): boolean {
  for (const key in snapshot.tasks) if (!snapshot.tasks[key]!.queued) return true;
  return false;
}

/**
 * The hint in a store's wake payload,
 * `{"at":<ms>,"w":"<workflow>","i":"<id>","s":<snapshot>,"p":[{"n":<seq>,"e":<signal>}…],"b":1}`
 * (`w`, `i`, `s`, `p` and `b` optional; `p`, the sent signals waiting, is `true` without `s`; `b`:
 * {@link isBusyNotice}), or null for any text that is not one: anyone who can send on a
 * store's channel may send anything, so this never throws. A snapshot is kept only when it names
 * the instance `i` names; the worker's runner checks the rest as it checks a load.
 */
export function parseWakePayload(text: string | undefined): WakeNotice | null {
  let v: unknown;
  try {
    v = JSON.parse(text ?? '');
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const { at, w, i, s, p, b } = v as {
    at?: unknown | undefined;
    w?: unknown | undefined;
    i?: unknown | undefined;
    s?: unknown | undefined;
    p?: unknown | undefined;
    b?: unknown | undefined;
  };
  if (typeof at !== 'number' || !Number.isFinite(at)) return null;
  const hint: WakeNotice = { at };
  if (typeof w === 'string') hint.workflow = w;
  if (b === 1) hint.busy = true;
  if (typeof i === 'string' && isValidId(i)) {
    hint.id = i;
    const mine = typeof s === 'object' && s !== null && (s as { id?: unknown }).id === i;
    if (mine) hint.snapshot = s as Snapshot;
    // Signals were sent: with the snapshot, each with its seq; else (`"p":true`) claim them by id.
    if (mine && Array.isArray(p) && p.every((x) => Number.isSafeInteger(x?.n)))
      hint.sent = p.map((x) => ({ seq: x.n, event: x.e }));
    else if (p !== undefined) hint.sent = [];
  }
  return hint;
}
