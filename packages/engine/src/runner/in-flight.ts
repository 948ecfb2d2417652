import { taskKey } from '../reducer/transition-context.js';
import { isTerminal, type Snapshot } from '../snapshot.js';
import type { TaskAbort } from './task-abort.js';
import { PendingCount } from './work.js';

/**
 * The handlers a runner has in flight: by instance (so a write looks only at its own), each its
 * abort (which names its task run), plus the count of pending work `idle()` waits for. A list per
 * instance, not a map by key: an instance rarely runs more than a handler or two at once, and no
 * key string is built for a run nobody asks about.
 */
export class InFlight extends PendingCount {
  /** The aborts of the handlers running, by instance (a worker's job aborts its own through port.ts). */
  readonly running = new Map<string, TaskAbort[]>();

  /** Records a handler run of `instance` (its task and attempt are the abort's). */
  start(instance: string, abort: TaskAbort): void {
    const mine = this.running.get(instance);
    if (mine) mine.push(abort);
    else this.running.set(instance, [abort]);
  }

  /** Forgets a handler run {@link start} recorded (it returned or threw). */
  end(instance: string, abort: TaskAbort): void {
    const mine = this.running.get(instance);
    if (!mine) return;
    // The usual list holds this run alone: no splice (it allocates the array it removes).
    if (mine.length === 1) {
      if (mine[0] === abort) this.running.delete(instance);
      return;
    }
    const i = mine.indexOf(abort);
    if (i >= 0) mine.splice(i, 1);
  }

  /** After a write: aborts the handlers whose task the snapshot no longer hands out (or detached). */
  written(s: Snapshot): void {
    const mine = this.running.get(s.id);
    if (!mine) return;
    for (let i = mine.length - 1; i >= 0; i--) {
      const r = mine[i]!;
      const t = s.tasks[taskKey(r.task.step, r.task.phase, r.task.item)];
      if (!t || t.attempt !== r.task.attempt || t.detached) {
        r.abort(new Error(isTerminal(s.status) ? `instance ${s.status}` : 'task detached'));
        mine.splice(i, 1);
      }
    }
    if (mine.length === 0) this.running.delete(s.id);
  }

  /** Resolves when all the work counted has ended, including what ending it started. */
  async idle(): Promise<void> {
    while (this.pending) await this.drained();
  }
}
