import { within } from './clock.js';
import type { TaskPool } from './task-pool.js';

/**
 * The pool's part of a stop: from now on every job that has not started (and every one a finishing
 * handler's result dispatches) is given back as queued for any worker; running handlers get
 * `graceMs`, then their AbortSignals fire and they get `abortMs` more; then the give-back writes
 * get `abortMs`. Returns how many handlers were aborted.
 */
export async function drainPool(pool: TaskPool, graceMs: number, abortMs: number): Promise<number> {
  pool.closed = true;
  pool.releaseWaiting();
  let aborted = 0;
  const idle = pool.whenIdle();
  if (pool.size.running > 0) await within(idle, graceMs);
  if (pool.size.running > 0) {
    aborted = pool.abortRunning(new Error('worker stopping'));
    await within(idle, abortMs);
  }
  // Nothing waits in a closed pool (it gives every job back as it comes): the writes remain.
  await within(pool.released(), abortMs);
  return aborted;
}
