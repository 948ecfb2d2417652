import type { Context } from 'hono';

/** Options of the login rate limit: at most `max` failed logins per key in a sliding `windowMs`. */
export interface LoginRateLimit {
  /** Failed attempts allowed per client address, and per user name, in the window (default 5). */
  max?: number | undefined;
  /** The window in ms (default 60 000). */
  windowMs?: number | undefined;
}

/** Keys kept at most; past this the oldest are dropped (memory stays bounded under a flood of addresses). */
const MAX_KEYS = 10_000;

/**
 * Failed-login counters, in this process's memory: each key (a client address, a user name) keeps
 * the times of its recent failures. A key with `max` failures inside the window is refused until
 * the oldest of them leaves it. Several inspector processes each count on their own.
 */
export class LoginLimiter {
  private readonly failures = new Map<string, number[]>();
  private readonly max: number;
  private readonly windowMs: number;

  constructor(
    options: LoginRateLimit,
    private readonly now: () => number = Date.now,
  ) {
    this.max = Math.max(1, Math.floor(options.max ?? 5));
    this.windowMs = Math.max(1000, Math.floor(options.windowMs ?? 60_000));
  }

  private recent(key: string, at: number): number[] {
    const kept = (this.failures.get(key) ?? []).filter((t) => t > at - this.windowMs);
    if (kept.length) this.failures.set(key, kept);
    else this.failures.delete(key);
    return kept;
  }

  /** Seconds until any of `keys` may try again, or 0 when none is over the limit. */
  retryAfter(keys: readonly string[]): number {
    const at = this.now();
    let wait = 0;
    for (const key of keys) {
      const times = this.recent(key, at);
      if (times.length < this.max) continue;
      const oldest = times[times.length - this.max] ?? at;
      wait = Math.max(wait, Math.ceil((oldest + this.windowMs - at) / 1000));
    }
    return wait;
  }

  /** Records a failed attempt under every key. */
  fail(keys: readonly string[]): void {
    const at = this.now();
    for (const key of keys) {
      const times = this.recent(key, at);
      // Re-inserted so the Map's order is least recently failed first: the eviction order.
      this.failures.delete(key);
      this.failures.set(key, [...times, at].slice(-this.max));
    }
    for (const key of this.failures.keys()) {
      if (this.failures.size <= MAX_KEYS) break;
      this.failures.delete(key);
    }
  }
}

/**
 * The client address, as the runtime reports the connection: Node (`@hono/node-server`) puts the
 * socket in `c.env.incoming`. Forwarded headers are not read by default: any client can set them.
 * Behind a proxy, pass `clientAddress` to read the proxy's header instead.
 */
export function connectionAddress(c: Context): string | undefined {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: unknown } } } | undefined;
  const address = env?.incoming?.socket?.remoteAddress;
  return typeof address === 'string' ? address : undefined;
}
