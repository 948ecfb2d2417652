// The worker's time: its clock, its sleeps and the jitter that keeps workers apart. Kept here so
// the rest of the worker (and everything below it) reads no clock and draws no random number.

/** A pause that can be cut short: `wake()` ends the current (or the next) sleep at once. */
export class Sleeper {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private resolve: (() => void) | undefined;
  private pending = false;

  /** Sleeps `ms` (at least 0), or less if woken. */
  sleep(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.resolve = resolve;
      this.timer = setTimeout(() => this.wake(), Math.max(0, ms));
    });
  }

  /** Ends the sleep in progress, or makes the next one return at once. */
  wake(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const r = this.resolve;
    this.resolve = undefined;
    if (r) r();
    else this.pending = true;
  }
}

/** `ms` moved by up to ± `share` of itself, at random. */
export function jittered(ms: number, share: number): number {
  return ms * (1 + share * (2 * Math.random() - 1));
}

/** `ms` shortened by up to `share` of itself, at random: never later than `ms`. */
export function jitteredDown(ms: number, share: number): number {
  return ms * (1 - share * Math.random());
}

/** A random token telling this worker apart from others (its turn among them; no security use). */
export function randomToken(): string {
  return Math.random().toString(36).slice(2);
}

/**
 * Waits for `p`, at most `ms` (a bounded wait during shutdown). The timer is cleared whichever
 * comes first: one left behind would keep the process alive for the rest of `ms` after `stop()`.
 */
export async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([p, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** The default clock. */
export const systemClock = (): number => Date.now();

/**
 * Milliseconds from now until the wall-clock time `at`, to a fraction of a millisecond.
 * `Date.now()` counts whole milliseconds, so a sleep planned from it ends on average half a
 * millisecond late (and a timer that fires a little early costs another whole one); the monotonic
 * `performance.now()` supplies the fraction. The offset between the two clocks is the largest seen,
 * so the estimate never runs ahead of `Date.now()`, and is taken afresh when the wall clock moves
 * back by a millisecond or more (a stepped or slewed clock).
 */
export class WallTimer {
  private offset = Number.NEGATIVE_INFINITY;
  private readonly mono: (() => number) | undefined =
    typeof performance !== 'undefined' && typeof performance.now === 'function'
      ? () => performance.now()
      : undefined;

  /** Milliseconds until `at`: negative once it has passed. */
  until(at: number): number {
    const wall = Date.now();
    if (!this.mono) return at - wall;
    const mono = this.mono();
    const seen = wall - mono;
    if (seen > this.offset || seen < this.offset - 1) this.offset = seen;
    return at - (mono + this.offset);
  }
}
