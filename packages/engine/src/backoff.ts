// One retry schedule for everything that waits out an outage: a worker's polls, its wake
// subscription, the stores' LISTEN/SUBSCRIBE reconnects and the Node supervisor's restarts.
// (A task's retries follow its own retry policy, kept deterministic in the reducer.)

/** A retry schedule: the delay grows by `factor` from `firstMs` up to `maxMs`, each moved by up to ± `jitter` of itself. */
export interface Backoff {
  /** Delay before the first retry, in ms. */
  readonly firstMs: number;
  /** Longest delay, in ms. */
  readonly maxMs: number;
  /** Growth per retry (default 2). */
  readonly factor?: number | undefined;
  /** ± share of each delay drawn at random, so many waiters spread out (default 0.2; 0 for none). */
  readonly jitter?: number | undefined;
}

/**
 * From 100 ms, doubling, at most 5 s, ±20%: the default for a store or a subscription that is
 * down. Outages are mostly a restart or a failover of seconds; a longer pause would only delay
 * every instance by as much once the store is back, while a retry every 5 s costs a down server
 * nothing worth saving.
 */
export const OUTAGE_BACKOFF: Backoff = { firstMs: 100, maxMs: 5_000, factor: 2, jitter: 0.2 };

/**
 * The delay before retry number `attempt` (0 for the first) under `policy`.
 *
 * @example
 * backoffDelay(OUTAGE_BACKOFF, 0); // 80–120 ms
 * backoffDelay(OUTAGE_BACKOFF, 9); // 4–5 s (never above maxMs)
 */
export function backoffDelay(policy: Backoff, attempt: number, random: () => number = Math.random): number {
  const factor = policy.factor ?? 2;
  const jitter = policy.jitter ?? 0.2;
  const ceiling = Math.min(policy.maxMs, policy.firstMs * factor ** Math.min(Math.max(0, attempt), 64));
  return Math.min(policy.maxMs, ceiling * (1 + jitter * (2 * random() - 1)));
}

/** Throws `RangeError` unless `policy` is a usable schedule (`what` names it in the message). */
export function checkBackoff(what: string, policy: Backoff): Backoff {
  const { firstMs, maxMs, factor = 2, jitter = 0.2 } = policy;
  if (!(Number.isFinite(firstMs) && firstMs >= 0 && Number.isFinite(maxMs) && maxMs >= firstMs))
    throw new RangeError(`${what}: backoff needs 0 <= firstMs <= maxMs, got ${JSON.stringify(policy)}`);
  if (!(Number.isFinite(factor) && factor >= 1) || !(Number.isFinite(jitter) && jitter >= 0 && jitter < 1))
    throw new RangeError(
      `${what}: backoff needs factor >= 1 and 0 <= jitter < 1, got ${JSON.stringify(policy)}`,
    );
  return policy;
}
