// A periodic job beside a worker: the mover and retention run this way in a Node process (or any
// runtime with timers). A loop of its own rather than a worker option: the worker entry stays as
// small as it is, and a deployment runs one mover for many workers, not one per worker.

/** Options of {@link runEvery}. */
export interface RunEveryOptions {
  /** The clock handed to each run (default `Date.now`). */
  clock?: (() => number) | undefined;
  /** Told about a run that threw; the loop goes on (default: ignored). */
  onError?: ((error: unknown) => void) | undefined;
}

/** A running {@link runEvery} loop. */
export interface EveryHandle {
  /** Stops the loop; resolves once a run in progress has finished. */
  stop(): Promise<void>;
}

/**
 * Runs `job(now)` every `everyMs` (the next run starts `everyMs` after the last one ended, so runs
 * never overlap) until stopped.
 *
 * @example
 * const mover = runEvery(10_000, (now) => tiered.move({ now, limit: 1000 }));
 * // on shutdown:
 * await mover.stop();
 */
export function runEvery(
  everyMs: number,
  job: (now: number) => Promise<unknown>,
  options: RunEveryOptions = {},
): EveryHandle {
  if (!(Number.isSafeInteger(everyMs) && everyMs >= 1))
    throw new RangeError('runEvery: everyMs must be a positive integer');
  const clock = options.clock ?? Date.now;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = (async () => {
      try {
        await job(clock());
      } catch (e) {
        options.onError?.(e);
      }
      if (!stopped) timer = setTimeout(tick, everyMs);
    })();
  };
  timer = setTimeout(tick, everyMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
