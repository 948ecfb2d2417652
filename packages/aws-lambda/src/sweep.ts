/**
 * The sweep: a function on a `rate(1 minute)` schedule rule that ticks every due instance
 * (`runner.processDue`, which claims what it takes) and runs their handlers. Stream records are
 * hints: one written before the stream's reader opened (at `LATEST`), or dropped after 24 hours of
 * retries, leaves its instance due with no one told; so does a wake the queue or Scheduler lost, or
 * a task whose function died mid-handler (its deadline passes). The sweep finds each of them within
 * one period. Idle, it costs one Query per due shard (the app uses one shard).
 */
import type { Runner } from '@stepfold/engine';
import type { SweepResult } from './lambda-types.js';
import type { LambdaLog } from './log.js';

/** What Lambda's context tells the sweep: the time it has left. */
export interface SweepContext {
  getRemainingTimeInMillis?: (() => number) | undefined;
}

/** Options of {@link createSweepHandler}. */
export interface SweepHandlerOptions {
  /** The executing runner. */
  runner: Runner;
  clock: () => number;
  log: LambdaLog;
  /** Instances ticked per round (default 100); rounds go on while they come back full. */
  limit?: number | undefined;
  /** Starts no round with less time left than this, ms (default 10 000). */
  reserveMs?: number | undefined;
}

/** Creates the sweep handler. */
export function createSweepHandler(
  o: SweepHandlerOptions,
): (event?: unknown, context?: SweepContext) => Promise<SweepResult> {
  const limit = o.limit ?? 100;
  const reserve = o.reserveMs ?? 10_000;
  return async (_event, context) => {
    const ticked: string[] = [];
    for (;;) {
      const ids = await o.runner.processDue(o.clock(), limit);
      ticked.push(...ids);
      const left = context?.getRemainingTimeInMillis?.() ?? Number.POSITIVE_INFINITY;
      if (ids.length < limit || left < reserve) break;
    }
    await o.runner.idle();
    o.log({ fn: 'sweep', action: 'swept', ids: ticked });
    return { ticked };
  };
}
