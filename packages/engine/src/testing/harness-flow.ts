import type { WorkflowEvent } from '../events.js';
import { flowChanges, refusalEvent } from '../runner/flow-changes.js';
import { retryAt } from '../runner/flow-gate.js';
import type { Snapshot } from '../snapshot.js';
import type { FlowCounter } from './flow-counter.js';

// The runner's flow gate (runner/flow-gate.ts), synchronously, over the harness tree's counts: a
// harness write acquires what it dispatched before it is kept, and releases what it ended after.

/**
 * Acquires what `next` needs beyond `prev` from `counter` at `now`, applying each answer with
 * `apply` (a refusal as `task.throttled` or `instance.throttled`, a granted admission as
 * `instance.admitted`), until the snapshot asks for nothing new; returns the snapshot then.
 */
export function acquireSync(
  counter: FlowCounter,
  prev: Snapshot | null,
  next: Snapshot,
  now: number,
  apply: (s: Snapshot, e: WorkflowEvent) => Snapshot,
): Snapshot {
  const decided = new Set<string>();
  for (;;) {
    const todo = flowChanges(prev, next).acquire.filter((a) => !decided.has(a.holder));
    if (todo.length === 0) return next;
    for (const a of todo) {
      decided.add(a.holder);
      const grant = counter.acquire(a.holder, next.id, a.needs, now, a.until);
      if (grant.granted) {
        if (!a.task) next = apply(next, { type: 'instance.admitted', at: now });
        continue;
      }
      next = apply(next, refusalEvent(a, grant.need, retryAt(grant.until, now), now));
    }
  }
}

/** Releases what a write from `prev` to `next` ended and renews moved leases; returns the instances to tick. */
export function settleSync(
  counter: FlowCounter,
  prev: Snapshot | null,
  next: Snapshot,
  now: number,
): string[] {
  const { release, renew } = flowChanges(prev, next);
  for (const r of renew) counter.renew([r.holder], r.until);
  return release.length ? [...new Set(counter.release(release, now))] : [];
}
