import type { WorkflowEvent } from '../events.js';
import type { Reduction } from '../reducer/reducer.js';
import type { LogEntry, Snapshot } from '../snapshot.js';
import type { FlowStore } from '../store/flow.js';
import { flowChanges, refusalEvent } from './flow-changes.js';

/**
 * The latest a refused holder is tried again: the store's time when sooner (a rate window that
 * slides, a lease that lapses). A released slot ticks it sooner; this is only the poll fallback,
 * which also bounds what a lost wake costs (a release that ticked the waiter just before its
 * refusal was saved, in another process).
 */
export const FLOW_RETRY_MS = 30_000;

/** When a refused holder is tried again at the latest: the store's time, or {@link FLOW_RETRY_MS} from now if sooner. */
export function retryAt(until: number | null, now: number): number {
  return Math.min(until ?? Number.POSITIVE_INFINITY, now + FLOW_RETRY_MS);
}

/** A write's snapshot after the store was asked: refusals folded in, and the holders it took. */
export interface Gated {
  next: Snapshot;
  transitions: readonly LogEntry[];
  /** Holders this write acquired: given back if its save fails. */
  taken: string[];
}

const ignore = () => {};

/**
 * The runner's side of the store's `flow`: before a save it acquires what the write dispatched
 * (a refusal is folded into the same write as `task.throttled` or `instance.throttled`; an
 * admission granted as `instance.admitted`); after the save it releases what the write ended and
 * ticks the instances that waited for it; after a failed save it gives back what it took.
 */
export class FlowGate {
  constructor(
    private readonly flow: FlowStore,
    private readonly clock: () => number,
    /** Ticks instances that waited for a slot that just freed (not awaited by the write). */
    private readonly wake: (ids: readonly string[]) => void,
  ) {}

  /**
   * Acquires every holder `next` needs beyond `prev`, folding each answer into the snapshot with
   * `fold`, until the snapshot asks for nothing new (an admission granted enters the first step,
   * which may dispatch limited attempts). A store failure gives back what was taken, then throws.
   */
  async acquire(
    prev: Snapshot | null,
    next: Snapshot,
    transitions: readonly LogEntry[],
    fold: (s: Snapshot, e: WorkflowEvent) => Reduction,
  ): Promise<Gated> {
    const taken: string[] = [];
    const decided = new Set<string>();
    try {
      for (;;) {
        const todo = flowChanges(prev, next).acquire.filter((a) => !decided.has(a.holder));
        if (todo.length === 0) break;
        for (const a of todo) {
          decided.add(a.holder);
          const now = this.clock();
          const grant = await this.flow.acquire(a.holder, next.id, a.needs, now, a.until);
          if (grant.granted) taken.push(a.holder);
          const ev = grant.granted
            ? a.task
              ? undefined
              : ({ type: 'instance.admitted', at: now } as const)
            : refusalEvent(a, grant.need, retryAt(grant.until, now), now);
          if (!ev) continue;
          const r = fold(next, ev);
          next = r.snapshot;
          if (r.transitions.length) transitions = [...transitions, ...r.transitions];
        }
      }
    } catch (e) {
      this.giveBack(taken);
      throw e;
    }
    return { next, transitions, taken };
  }

  /** After a failed save: the holders the write took are released (waiters they held off are ticked). */
  giveBack(taken: readonly string[]): void {
    if (taken.length) this.release(taken);
  }

  /** After a successful save: what the write ended is released, moved leases renewed. */
  settled(prev: Snapshot | null, next: Snapshot): void {
    const { release, renew } = flowChanges(prev, next);
    if (release.length) this.release(release);
    const byUntil = new Map<number, string[]>();
    for (const r of renew) {
      const list = byUntil.get(r.until);
      if (list) list.push(r.holder);
      else byUntil.set(r.until, [r.holder]);
    }
    for (const [until, holders] of byUntil) this.flow.renew(holders, until).catch(ignore);
  }

  /** Releases holders and ticks the waiters the store names; a failure leaves it to the leases. */
  private release(holders: readonly string[]): void {
    this.flow.release(holders, this.clock()).then((ids) => {
      if (ids.length) this.wake([...new Set(ids)]);
    }, ignore);
  }
}
