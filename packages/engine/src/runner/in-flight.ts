import { isTerminal, type Snapshot } from '../snapshot.js';
import type { TaskAbort } from './task-abort.js';

interface Running {
  abort: TaskAbort;
  key: string;
  attempt: number;
}

/**
 * The handlers a runner has in flight: by instance (so a write looks only at its own), each with
 * the abort its handler's signal reads, plus every pending promise `idle()` waits for.
 */
export class InFlight {
  private readonly running = new Map<string, Map<string, Running>>();
  private readonly pending = new Set<Promise<unknown>>();

  /** Records a handler run of `instance`'s task `key` (a `tasks` key) at `attempt`; returns its release. */
  start(instance: string, key: string, attempt: number, abort: TaskAbort): () => void {
    let mine = this.running.get(instance);
    if (!mine) {
      mine = new Map();
      this.running.set(instance, mine);
    }
    const runKey = `${key}\u0000${attempt}`;
    mine.set(runKey, { abort, key, attempt });
    const held = mine;
    return () => {
      held.delete(runKey);
      if (held.size === 0 && this.running.get(instance) === held) this.running.delete(instance);
    };
  }

  /** After a write: aborts the handlers whose task the snapshot no longer hands out (or detached). */
  written(s: Snapshot): void {
    const mine = this.running.get(s.id);
    if (!mine) return;
    for (const [k, r] of mine) {
      const t = s.tasks[r.key];
      if (!t || t.attempt !== r.attempt || t.detached) {
        r.abort.abort(new Error(isTerminal(s.status) ? `instance ${s.status}` : 'task detached'));
        mine.delete(k);
      }
    }
    if (mine.size === 0) this.running.delete(s.id);
  }

  /** Aborts one running handler (a worker out of grace time); false if it is not running. */
  abort(instance: string, key: string, attempt: number, reason: unknown): boolean {
    const r = this.running.get(instance)?.get(`${key}\u0000${attempt}`);
    r?.abort.abort(reason);
    return r !== undefined;
  }

  /** Tracks a promise until it settles (its rejection is the caller's to handle). */
  track(p: Promise<unknown>): void {
    this.pending.add(p);
    // One handler for both outcomes: a derived promise fewer than finally + catch, on every task.
    const drop = () => {
      this.pending.delete(p);
    };
    p.then(drop, drop);
  }

  /** Resolves when everything tracked has settled, including what settling started. */
  async idle(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }
}
