// Who takes a task a wake notice hands to every worker. Each worker that hears the notice could
// write the take; the write is conditional, so one wins and the others' writes fail (two queries
// each, counted as version conflicts). Instead one worker takes at once and the others stand by:
// after a short delay they claim the instance by id, which finds nothing once the take is written.
import { fnv1a } from '../content-hash.js';
import type { FleetPosition, WorkerStats } from './types.js';

// Without a fleet: a worker that lost a take this recently stands by (others hear its notices).
const CONTENDED_MS = 10_000;

/**
 * The delay before a worker tries to take a handed-over task. With a known fleet, the instance id's
 * hash picks the worker that takes at once; the others follow `standbyMs` apart, in an order that
 * also comes from the hash, so a dead worker's share goes to the next one within `standbyMs`.
 * Without one, a worker takes at once until it has lost a take (it is alone, as far as it knows);
 * after that it stands by for a share of `standbyMs` drawn from a hash of the id and its own token,
 * so the workers' turns differ per instance and the earliest one takes.
 */
export class TakeOrder {
  private seenLost = 0;
  private lostAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly fleet: FleetPosition | undefined,
    private readonly standbyMs: number,
    private readonly token: string,
    private readonly stats: Readonly<WorkerStats>,
  ) {}

  /** Milliseconds to stand by before trying to take `id`'s handed-over task at `now` (0: take it now). */
  delay(id: string, now: number): number {
    if (this.fleet && this.fleet.size > 1) {
      const turn = (fnv1a(id) + this.fleet.index) % this.fleet.size;
      return turn * this.standbyMs;
    }
    if (this.stats.lostTakes > this.seenLost) {
      this.seenLost = this.stats.lostTakes;
      this.lostAt = now;
    }
    if (now - this.lostAt >= CONTENDED_MS) return 0;
    return (fnv1a(`${id}\u0000${this.token}`) / 0x100000000) * this.standbyMs;
  }
}
