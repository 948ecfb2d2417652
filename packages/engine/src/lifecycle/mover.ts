import { isStepfoldError } from '../errors.js';
import { isTerminal, type Snapshot, type Status, TERMINAL_STATUSES } from '../snapshot.js';
import type { Store } from '../store/store.js';

// The mover of a tiered store: pages over hot's finished and waiting instances (a cursor per
// status kept between calls, so each call continues where the last stopped) and demotes the idle
// ones: copy to cold, then a conditional delete in hot. See tiered-store.ts for the argument.

/** Options of one `move` call. */
export interface MoveOptions {
  /** The mover's clock (epoch ms): ages and wake times are measured against it. */
  now: number;
  /** Hot instances looked at in this call, at most (default 500). */
  limit?: number | undefined;
}

/** What one `move` call did. */
export interface MoveResult {
  /** Instances now in cold only. */
  demoted: number;
  /** Instances looked at and left in hot (not idle long enough, or a task in flight). */
  skipped: number;
  /** Demotions a concurrent write or delete won: the instance stays where that write left it. */
  conflicts: number;
}

/** The mover's settings and its position in hot, shared by every call. */
export interface MoverState {
  hot: Store;
  cold: Store;
  finishedAfterMs: number;
  sleepingMs: number;
  minAgeMs: number;
  concurrency: number;
  /** Where each status's scan stopped (absent: from the start). */
  cursors: Map<Status, string>;
  /** Which status the next call starts with, so a busy one does not starve the others. */
  turn: number;
}

/** Statuses the mover scans: finished ones, and waiting (asleep, or waiting for a signal). */
const SCANNED: readonly Status[] = [...TERMINAL_STATUSES, 'waiting'];

/** Whether `s` may move now: idle for `minAgeMs`, and finished long enough or asleep for long. */
export function isIdle(state: MoverState, s: Snapshot, now: number): boolean {
  const age = now - s.updatedAt;
  if (!(age >= state.minAgeMs)) return false;
  if (isTerminal(s.status)) return age >= state.finishedAfterMs;
  if (s.status !== 'waiting' || Object.keys(s.tasks).length > 0) return false;
  return s.wakeAt === null || s.wakeAt - now > state.sleepingMs;
}

/** Demotes one instance; the outcome to count. */
async function demote(state: MoverState, s: Snapshot): Promise<keyof MoveResult> {
  const { hot, cold } = state;
  const stale = await cold.load(s.id);
  try {
    // Over a stale copy (a move or a promotion that crashed half-way), at that copy's version.
    if (stale === null) await cold.create(s);
    else await cold.save(s, stale.version);
  } catch (e) {
    // Another mover got there first: leave it to that one.
    if (isStepfoldError(e, 'ALREADY_EXISTS') || isStepfoldError(e, 'VERSION_CONFLICT')) return 'conflicts';
    throw e;
  }
  const gone = await hot.delete(s.id, { version: s.version }).catch((e: unknown) => {
    if (isStepfoldError(e, 'VERSION_CONFLICT')) return false;
    throw e;
  });
  if (gone) return 'demoted';
  // A write moved it on in hot (or a delete removed it): our copy must not outlive that. At the
  // copied version only: anything else there is another move's.
  await cold.delete(s.id, { version: s.version }).catch((e: unknown) => {
    if (!isStepfoldError(e, 'VERSION_CONFLICT')) throw e;
  });
  return 'conflicts';
}

/** Runs `work` over `items`, at most `n` at once. */
async function pooled<T>(items: readonly T[], n: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, lane));
}

/** One `move` call: scan up to `limit` hot instances, status by status from where the last call stopped. */
export async function moveToCold(state: MoverState, options: MoveOptions): Promise<MoveResult> {
  const { now } = options;
  const limit = options.limit ?? 500;
  if (typeof now !== 'number' || Number.isNaN(now)) throw new RangeError('move: now must be a number');
  if (!(Number.isSafeInteger(limit) && limit >= 1))
    throw new RangeError('move: limit must be a positive integer');
  const result: MoveResult = { demoted: 0, skipped: 0, conflicts: 0 };
  let budget = limit;
  const first = state.turn++ % SCANNED.length;
  for (let k = 0; k < SCANNED.length && budget > 0; k++) {
    const status = SCANNED[(first + k) % SCANNED.length]!;
    const page = await state.hot.list({ status, limit: budget, cursor: state.cursors.get(status) ?? null });
    if (page.cursor === null) state.cursors.delete(status);
    else state.cursors.set(status, page.cursor);
    budget -= page.items.length;
    const idle = page.items.filter((s) => isIdle(state, s, now));
    result.skipped += page.items.length - idle.length;
    await pooled(idle, state.concurrency, async (s) => {
      result[await demote(state, s)]++;
    });
  }
  return result;
}
