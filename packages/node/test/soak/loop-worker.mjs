// @ts-check
// The soak's baseline: a worker whose whole loop is `runner.processDue()`. Each call claims up to
// `limit` due instances, ticks them and runs the handlers those ticks hand out in this process,
// following each instance on for as long as its writes keep handing out work; the loop calls again
// at once after a call that found something, and sleeps a little after one that found nothing.
// It has no wake notices, no hand-offs and no concurrency bound: what it shows is how fast the
// store alone brings work back, which a full worker should match.
//
// It implements the Worker interface so serveWorker drains it on SIGTERM like a real one: the
// loop stops and the call in flight finishes (its handlers are short), then the process exits.
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * @typedef {object} LoopOptions
 * @property {number} minMs pause after the first call that found nothing
 * @property {number} maxMs longest pause (it doubles per empty call up to this)
 * @property {number} [limit] instances per call (default 100, processDue's own)
 * @property {(error: unknown) => void} [onError]
 */

/**
 * @param {import('@stepfold/engine').Runner} runner @param {LoopOptions} o
 * @returns {import('@stepfold/engine').Worker}
 */
export function createLoopWorker(runner, o) {
  /** @type {import('@stepfold/engine').WorkerStats} */
  const stats = {
    claimed: 0,
    ticks: 0,
    completed: 0,
    failed: 0,
    errors: 0,
    dropped: 0,
    released: 0,
    skipped: 0,
    polls: 0,
    wakes: 0,
    conflicts: 0,
    lostTakes: 0,
    refusedNotices: 0,
    unreadable: 0,
    running: 0,
    queued: 0,
    lastLagMs: 0,
    maxLagMs: 0,
  };
  let stopping = false;
  /** @type {Promise<void> | undefined} */
  let loop;
  /** @type {AbortController | undefined} */
  let pause;
  /** @type {Array<() => void>} */
  const idleWaiters = [];

  const run = async () => {
    let pauseMs = o.minMs;
    while (!stopping) {
      let found = 0;
      stats.polls++;
      try {
        found = (await runner.processDue(undefined, o.limit ?? 100)).length;
      } catch (e) {
        // An outage or a failed tick: the others of the call were ticked; pause as after nothing.
        stats.errors++;
        o.onError?.(e);
      }
      stats.claimed += found;
      stats.ticks += found;
      stats.conflicts = runner.stats.conflicts;
      if (found > 0) {
        pauseMs = o.minMs;
        continue;
      }
      for (const w of idleWaiters.splice(0)) w();
      if (stopping) break;
      pause = new AbortController();
      await sleep(pauseMs, undefined, { signal: pause.signal }).catch(() => {});
      pause = undefined;
      pauseMs = Math.min(o.maxMs, pauseMs * 2);
    }
  };

  return {
    async start() {
      loop ??= run();
    },
    async stop() {
      stopping = true;
      pause?.abort();
      await loop;
      // Anything this runner started outside processDue (none today) is waited for too.
      await runner.idle();
      for (const w of idleWaiters.splice(0)) w();
    },
    nudge() {
      pause?.abort();
    },
    idle() {
      return new Promise((resolve) => {
        idleWaiters.push(resolve);
      });
    },
    stats,
  };
}
