import { heartbeatDetails } from '../reducer/task-heartbeat.js';
import type { TaskState } from '../snapshot.js';
import { type HandlerBeat, type Held, type RenewLeases, TaskLeases } from './task-leases.js';

// Handler heartbeats (`ctx.heartbeat`), as a value: `createRunner({ heartbeats: handlerHeartbeats })`.
// A runner without it carries none of this: its leases only renew themselves, and `ctx.heartbeat`
// refuses with INVALID_OPTIONS.

/** What `createRunner`'s `heartbeats` option takes: {@link handlerHeartbeats}. */
export interface RunnerHeartbeats {
  /** The leases of a runner whose handlers heartbeat. */
  leases(leaseMs: number, clock: () => number, renew: RenewLeases): TaskLeases;
  /**
   * The handler of `task` starts: its `ctx.heartbeat`, which checks the details (`HEARTBEAT_TOO_LARGE`,
   * `INVALID_INPUT`) and hands the beat to `leases` (the ones {@link leases} made).
   */
  start(leases: TaskLeases, instance: string, task: TaskState): (details?: unknown) => void;
}

/**
 * Leases that a handler's heartbeats renew too. A handler's heartbeats (of any step) are written
 * at most once per third of the lease, the latest details winning; one the throttle lets through
 * goes out at once, with the instance's other due renewals.
 */
class BeatingLeases extends TaskLeases {
  /** A lease with less than half left as its handler starts (its job waited in a pool) is renewed once first. */
  override started(instance: string, task: TaskState): Held | undefined {
    const h = super.started(instance, task);
    if (h && h.leaseUntil - this.clock() < h.task.heartbeatMs! / 2) this.beatOf(instance, h, {});
    return h;
  }

  /** A heartbeat of the handler of `task`: written now, or once its throttle allows, with the newest details. */
  beat(instance: string, task: TaskState, beat: HandlerBeat): void {
    const h = this.find(instance, task);
    if (h) this.beatOf(instance, h, beat);
  }

  private beatOf(instance: string, h: Held, beat: HandlerBeat): void {
    // Details given stay until written: a later beat without any does not drop them.
    h.beat = 'details' in beat || !h.beat ? beat : h.beat;
    if (!h.renewing && this.clock() - h.sentAt >= this.leaseOf(h) / 3)
      this.sweepList(this.held.get(instance)!);
  }

  /** A new hold's throttle counts from its dispatch. */
  protected override heldSince(): number {
    return this.clock();
  }

  /** Also due: a heartbeat its throttle lets through. */
  protected override due(h: Held, now: number): boolean {
    return (h.beat !== undefined && now - h.sentAt >= this.leaseOf(h) / 3) || super.due(h, now);
  }
}

/**
 * Handler heartbeats for `createRunner({ heartbeats: handlerHeartbeats })`: `ctx.heartbeat(details?)`
 * renews the attempt's lease (for a task step with `heartbeatMs`, only it does) and keeps the
 * details for the next attempt (`ctx.heartbeatDetails`).
 */
export const handlerHeartbeats: RunnerHeartbeats = {
  leases: (leaseMs, clock, renew) => new BeatingLeases(leaseMs, clock, renew),
  start(leases, instance, task) {
    const beating = leases as BeatingLeases;
    beating.started(instance, task);
    return (details) =>
      beating.beat(instance, task, details === undefined ? {} : { details: heartbeatDetails(details) });
  },
};
