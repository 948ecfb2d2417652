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

/** A promise that resolves after `ms` (for bounded waits during shutdown). */
export function after(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The default clock. */
export const systemClock = (): number => Date.now();
