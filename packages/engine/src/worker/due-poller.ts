import { isStepfoldError } from '../errors.js';
import type { Runner } from '../runner/types.js';
import type { Store } from '../store/store.js';
import type { TaskPool } from './task-pool.js';
import type { WorkerEvents, WorkerStats } from './types.js';

/** What one round found. */
export interface RoundResult {
  /** Ids ticked. */
  ticked: number;
  /** Some lane returned all it was asked for: more may be due. */
  full: boolean;
}

// Codes of an instance this worker cannot step: another worker (with that workflow or version) can.
const NOT_MINE = ['UNKNOWN_WORKFLOW', 'UNKNOWN_VERSION', 'DEFINITION_HASH_MISMATCH'] as const;
const MAX_SKIP_MS = 5 * 60_000;

/**
 * One poll round of a worker: visits each workflow's lane (`listDue` with `{ workflow }`), starting
 * one further along each round, asks each for its share of the free slots (within its cap), and
 * ticks what comes back. Instances it cannot step are skipped for a growing period, their claims
 * given back, and the lane asks for that many more ids, so they never fill a batch.
 */
export class DuePoller {
  private start = 0;
  /** Lanes a wake notice named since the last round: polled first, so the notice's instance is ticked first. */
  private readonly preferred = new Set<string>();
  /** id → when to try again and how long the last skip was. */
  private readonly skips = new Map<string, { until: number; ms: number; workflow: string }>();

  constructor(
    private readonly runner: Runner,
    private readonly store: Store,
    private readonly pool: TaskPool,
    private readonly stats: WorkerStats,
    private readonly emit: <K extends keyof WorkerEvents>(k: K, ...a: Parameters<WorkerEvents[K]>) => void,
    private readonly clock: () => number,
    private readonly skipMs: number,
    /** `single`: one lane for every workflow (a store whose each poll is costly), caps kept by the pool only. */
    private readonly lanes: 'workflow' | 'single' = 'workflow',
  ) {}

  /** Polls `workflow`'s lane first in the next round (a wake notice named it). */
  prefer(workflow: string): void {
    if (this.lanes === 'workflow') this.preferred.add(workflow);
  }

  /** Polls every lane once; a failed `listDue` rejects (the caller backs off). */
  async round(): Promise<RoundResult> {
    // In a single lane, '' stands for "every workflow".
    const all = this.lanes === 'single' ? [''] : this.runner.workflows;
    const n = all.length;
    const share = Math.max(1, Math.ceil(this.pool.free() / Math.max(1, n)));
    this.start = (this.start + 1) % Math.max(1, n);
    const rotated = all.map((_, i) => all[(this.start + i) % n]!);
    const first = rotated.filter((l) => this.preferred.has(l));
    this.preferred.clear();
    const lanes = first.length ? [...first, ...rotated.filter((l) => !first.includes(l))] : rotated;
    const result: RoundResult = { ticked: 0, full: false };
    const ticks: Promise<void>[] = [];
    for (const lane of lanes) {
      const want = Math.min(share, lane ? this.pool.freeFor(lane) : this.pool.free());
      if (want <= 0) continue;
      const now = this.clock();
      const skipping = this.skippedIn(lane, now);
      const ids = await this.store.listDue(now, want + skipping, lane ? { workflow: lane } : undefined);
      this.stats.polls++;
      if (ids.length >= want + skipping) result.full = true;
      const mine: string[] = [];
      const notMine: string[] = [];
      for (const id of ids) ((this.skips.get(id)?.until ?? 0) > now ? notMine : mine).push(id);
      // Claimed with the rest: give them straight back for a worker that can step them.
      if (notMine.length) ticks.push(this.release(notMine));
      if (mine.length === 0) continue;
      this.stats.claimed += mine.length;
      this.emit('claimed', mine, lane || '*');
      result.ticked += mine.length;
      for (const id of mine) ticks.push(this.tick(id, now));
    }
    await Promise.all(ticks);
    return result;
  }

  /** Instances of `lane` being skipped now (a lapsed skip is kept to double the next one). */
  private skippedIn(lane: string, now: number): number {
    let count = 0;
    for (const s of this.skips.values()) if (s.until > now && (lane === '' || s.workflow === lane)) count++;
    return Math.min(count, 1000);
  }

  private async tick(id: string, now: number): Promise<void> {
    try {
      const r = await this.runner.handle({ type: 'tick', id, now, wait: 'write' });
      if (r.dueAt === undefined) return; // nothing was due any more: someone else ticked it
      this.stats.ticks++;
      const lag = r.dueAt === null ? 0 : Math.max(0, now - r.dueAt);
      this.stats.lastLagMs = lag;
      if (lag > this.stats.maxLagMs) this.stats.maxLagMs = lag;
      this.emit('lag', lag, id);
      this.skips.delete(id);
    } catch (e) {
      if (isStepfoldError(e, 'NOT_FOUND')) return;
      if (NOT_MINE.some((code) => isStepfoldError(e, code))) {
        const prior = this.skips.get(id)?.ms ?? 0;
        const ms = Math.min(MAX_SKIP_MS, prior ? prior * 2 : this.skipMs);
        const snapshot = await this.runner.get(id).catch(() => null);
        const until = now + ms;
        this.skips.set(id, { until, ms, workflow: snapshot?.workflow.name ?? '' });
        this.stats.skipped++;
        this.emit('skipped', id, e, until);
      } else {
        this.stats.errors++;
        this.emit('error', e, 'tick');
      }
      // Not ticked: give the claim back for a worker that can step it (or a later round).
      await this.release([id]);
    }
  }

  private async release(ids: string[]): Promise<void> {
    await this.store.releaseDue?.(ids).catch(() => {});
  }
}
