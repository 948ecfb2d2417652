import type { Runner } from '@stepfold/engine';

/** Options of {@link createPoller}. */
export interface PollerOptions {
  runner: Runner;
  /** Instances ticked at once: the `limit` of each `processDue` call. */
  concurrency: number;
  /** Pause after a round that found fewer due instances than `concurrency`. */
  intervalMs: number;
  onError?: (error: unknown) => void;
}

/** A `processDue` loop; `stop()` ends it after the round in hand (and its handlers) has finished. */
export interface Poller {
  start(): void;
  stop(): Promise<void>;
}

/**
 * Calls `runner.processDue(now, concurrency)` in a loop: each round ticks up to `concurrency`
 * due instances in parallel (timers, retry backoffs, task deadlines) and waits for the handlers
 * those ticks dispatched. A full round goes again at once; otherwise the loop sleeps
 * `intervalMs`. A failed round (database down) is reported and retried after the interval.
 */
export function createPoller(o: PollerOptions): Poller {
  let stopping = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  async function run(): Promise<void> {
    while (!stopping) {
      let due = 0;
      try {
        due = (await o.runner.processDue(Date.now(), o.concurrency)).length;
      } catch (e) {
        o.onError?.(e);
      }
      if (!stopping && due < o.concurrency) await pause(o.intervalMs);
    }
  }

  return {
    start() {
      loop ??= run();
    },
    async stop() {
      stopping = true;
      wake?.();
      await loop;
    },
  };
}
