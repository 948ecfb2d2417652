import { isStepfoldError } from '../errors.js';
import type { Runner } from '../runner/types.js';
import type { Snapshot } from '../snapshot.js';
import type { DueQuery, SentSignal, Store } from '../store/store.js';
import { countLostTakes, type Due, NOT_MINE, SentInbox } from './sent-inbox.js';
import type { TaskPool } from './task-pool.js';
import type { WorkerEvents, WorkerStats } from './types.js';

/** What one round found. */
export interface RoundResult {
  /** Ids ticked. */
  ticked: number;
  /** Some lane returned all it was asked for: more may be due. */
  full: boolean;
  /** Instances notices named are due and were left for want of a free slot: run another round once one frees. */
  left: boolean;
}

/** How a {@link DuePoller} polls. */
export interface PollerConfig {
  /** First skip of an instance this worker cannot step (doubling up to 5 min). */
  skipMs: number;
  /** `single`: one lane for every workflow (a store whose each poll is costly), caps kept by the pool only. */
  lanes?: 'workflow' | 'single' | undefined;
  /** Lease of every claim this poller takes, from the time it claims as of (see `WorkerOptions.claimLeaseMs`). */
  leaseMs: number;
  /** Told the due time of an instance claimed ahead of it, once held (a time already past wants a round). */
  heldDue?: ((at: number) => void) | undefined;
}

const MAX_SKIP_MS = 5 * 60_000;
// Instances named by wake notices and not yet claimed; more are left to the lanes.
const MAX_HINTED = 1000;
// A notice of a time at most this far ahead has its instance claimed at once and held until then,
// so the tick at the due time writes without first waiting for a claim. Short: a worker that dies
// holding one delays that instance until the claim lapses (the due time plus the claim lease).
const LOOKAHEAD_MS = 2_000;
const MAX_HELD = 100;

/**
 * One poll round of a worker: first the instances wake notices named (where the store can claim
 * them by id), then each workflow's lane (`listDue` with `{ workflow }`), starting one further
 * along each round, asking each for its share of the free slots (within its cap), and ticks what
 * comes back. A store with `claimDue` returns the snapshots with the claim, so no load follows.
 * Instances it cannot step are skipped for a growing period, their claims given back, and the
 * lane asks for that many more ids, so they never fill a batch.
 */
export class DuePoller {
  private start = 0;
  /** Lanes a wake notice named since the last round: polled first, so the notice's instance is ticked first. */
  private readonly preferred = new Set<string>();
  /** id → when to try again and how long the last skip was. */
  private readonly skips = new Map<string, { until: number; ms: number; workflow: string }>();
  /** id → due time, of instances wake notices named (claimed by id once due, with `claimDue`). */
  private readonly hinted = new Map<string, number>();
  /** Instances claimed ahead of their due time (see LOOKAHEAD_MS), ticked once due with no query. */
  private readonly held = new Map<string, { at: number; snapshot: Snapshot }>();
  /** Instances a notice handed over with their snapshot (a queued task), ticked once due with no claim and no query. */
  private readonly given = new Map<string, { at: number; snapshot: Snapshot; sent?: SentSignal[] }>();
  /** Hinted instances whose task a notice handed to every worker and another was to take first: found gone, that is a lost take. */
  private readonly standby = new Set<string>();
  /** Set on stop: a claim ahead that lands later is given straight back. */
  private closed = false;
  private readonly inbox: SentInbox;

  private readonly skipMs: number;
  private readonly lanes: 'workflow' | 'single';
  private readonly leaseMs: number;
  private readonly heldDue: (at: number) => void;

  constructor(
    private readonly runner: Runner,
    private readonly store: Store,
    private readonly pool: TaskPool,
    private readonly stats: WorkerStats,
    private readonly emit: <K extends keyof WorkerEvents>(k: K, ...a: Parameters<WorkerEvents[K]>) => void,
    private readonly clock: () => number,
    config: PollerConfig,
  ) {
    this.skipMs = config.skipMs;
    this.lanes = config.lanes ?? 'workflow';
    this.leaseMs = config.leaseMs;
    const heldDue = config.heldDue ?? (() => {});
    this.heldDue = heldDue;
    this.inbox = new SentInbox(store, stats, emit, () => heldDue(clock()));
  }

  /** Polls `workflow`'s lane first in the next round (a wake notice named it). */
  prefer(workflow: string): void {
    if (this.lanes === 'workflow') this.preferred.add(workflow);
  }

  /**
   * A notice named instance `id`, due at `at`: claimed by id in the first round from then on, or
   * right away and held until `at` when that is soon. False when not remembered (the store cannot
   * claim by id, or too many are): only the lanes will find it.
   */
  hint(id: string, at: number, standby = false, ahead = true): boolean {
    if (!this.store.claimDue) return false;
    if (this.held.has(id)) return true;
    const before = this.hinted.get(id);
    if (before === undefined && this.hinted.size >= MAX_HINTED) return false;
    this.hinted.set(id, at);
    if (standby) this.standby.add(id);
    // The same time heard twice (a worker's own write and its notice): one claim ahead is enough.
    // Not ahead (`ahead` false) when a task of the instance runs elsewhere: its result would make
    // the held snapshot stale (a lost race at the tick); the runner that writes it claims ahead.
    const soon = at - this.clock();
    if (ahead && before !== at && soon > 0 && soon <= LOOKAHEAD_MS && this.held.size < MAX_HELD)
      void this.reserve(id, at);
    return true;
  }

  /**
   * A notice handed over `snapshot`, due at `at` (a task queued for any worker): ticked from it in
   * the first round from then on, with no claim and no load. The write that takes the task is
   * conditional on the snapshot's version, so of the workers that heard the notice one wins; the
   * others give up with no reload (`lostTakes`). False when too many are remembered: claim it by id instead.
   */
  give(snapshot: Snapshot, at: number, sent?: SentSignal[]): boolean {
    const id = snapshot.id;
    if (this.held.has(id) && !sent) return true;
    if (!this.given.has(id) && this.given.size >= MAX_HINTED) return false;
    // The newest notice wins: it carries the snapshot a take must be conditional on (and every
    // signal sent before it that is still waiting).
    this.given.set(id, sent ? { at, snapshot, sent } : { at, snapshot });
    this.hinted.delete(id);
    return true;
  }

  /**
   * Signals were sent to `id` (a notice without its snapshot, or one this worker stood by for):
   * claimed by id next round.
   */
  claimSentTo(id: string, standby = false): boolean {
    return this.inbox.name(id, standby);
  }

  /**
   * Claims `id` as of its due time `at` (the claim lasts until `at` plus the store's claim period) and
   * holds its snapshot. Nothing held (another worker has it, or it moved on): the hint stays, and
   * the round at `at` claims by id as usual.
   */
  private async reserve(id: string, at: number): Promise<void> {
    let got: Snapshot | undefined;
    try {
      // Claimed as of `at`: the lease runs from the due time, so a worker killed holding it delays
      // the instance by the lease, not by however far ahead it was claimed.
      [got] = await this.store.claimDue!(at, 1, { ids: [id], leaseMs: this.leaseMs });
      this.stats.polls++;
    } catch {
      return; // the round at `at` tries again, and reports what fails
    }
    if (!got) return;
    const due = got.wakeAt;
    if (this.closed || typeof due !== 'number' || due > at || this.held.size >= MAX_HELD) {
      await this.release([id]);
      return;
    }
    this.hinted.delete(id);
    this.held.set(id, { at: due, snapshot: got });
    this.heldDue(due);
  }

  /** Gives back the claims of instances held for a later time, and of any claimed ahead from now on (on stop). */
  async releaseHeld(): Promise<void> {
    this.closed = true;
    this.given.clear();
    this.standby.clear();
    const ids = [...this.held.keys()];
    this.held.clear();
    if (ids.length) await this.release(ids);
  }

  /** The claim of one poll: snapshots with the claim where the store can, else ids. */
  private async claim(now: number, n: number, query: DueQuery & { ids?: string[] }): Promise<Due[]> {
    const leased = { ...query, leaseMs: this.leaseMs };
    if (this.store.claimDue) {
      const snapshots = await this.store.claimDue(now, n, leased);
      return snapshots.map((snapshot) => ({ id: snapshot.id, snapshot }));
    }
    const ids = await this.store.listDue(now, n, leased);
    return ids.map((id) => ({ id }));
  }

  /** Ticks the held and handed-over instances due by `now`, then claims and ticks the hinted ones. */
  private async hintedRound(now: number, ticks: Promise<void>[]): Promise<number> {
    const ready: Due[] = [];
    for (const [id, h] of this.held) {
      if (h.at > now || ready.length >= this.pool.free()) continue;
      ready.push({ id, snapshot: h.snapshot });
      this.held.delete(id);
    }
    for (const [id, g] of this.given) {
      if (g.at > now || ready.length >= this.pool.free()) continue;
      ready.push({ id, snapshot: g.snapshot, unclaimed: true, ...(g.sent ? { sent: g.sent } : {}) });
      this.given.delete(id);
    }
    let ticked = ready.length ? this.take(ready, now, '*', ticks) : 0;
    if (this.inbox.waiting)
      ticked += this.take(await this.inbox.claimNamed(now, this.pool.free()), now, '*', ticks);
    const ids: string[] = [];
    for (const [id, at] of this.hinted) {
      if (at > now || ids.length >= this.pool.free()) continue;
      ids.push(id);
      this.hinted.delete(id);
    }
    if (ids.length === 0) return ticked;
    // Another worker may have taken some, or they moved on: the lanes find whatever is left.
    const got = await this.claim(now, ids.length, { ids });
    this.stats.polls++;
    countLostTakes(this.standby, ids, got, this.stats);
    return ticked + this.take(got, now, '*', ticks);
  }

  /** Ticks what a poll claimed, giving back claims of instances this worker skips. */
  private take(got: Due[], now: number, lane: string, ticks: Promise<void>[]): number {
    const mine: Due[] = [];
    const notMine: string[] = [];
    for (const d of got) {
      if ((this.skips.get(d.id)?.until ?? 0) <= now) mine.push(d);
      else if (!d.unclaimed) notMine.push(d.id);
    }
    // Claimed with the rest: give them straight back for a worker that can step them.
    if (notMine.length) ticks.push(this.release(notMine));
    if (mine.length === 0) return 0;
    this.stats.claimed += mine.length;
    this.emit(
      'claimed',
      mine.map((d) => d.id),
      lane,
    );
    for (const d of mine) ticks.push(this.tick(d, now));
    return mine.length;
  }

  /**
   * Ticks the named instances that are due, then (with `everyLane`) polls every lane once; a
   * failed poll rejects (the caller backs off).
   */
  async round(everyLane = true): Promise<RoundResult> {
    if (!everyLane) {
      const ticks: Promise<void>[] = [];
      const ticked = await this.hintedRound(this.clock(), ticks);
      await Promise.all(ticks);
      return { ticked, full: false, left: this.namedDue(this.clock()) };
    }
    // In a single lane, '' stands for "every workflow".
    const all = this.lanes === 'single' ? [''] : this.runner.workflows;
    const n = all.length;
    const share = Math.max(1, Math.ceil(this.pool.free() / Math.max(1, n)));
    this.start = (this.start + 1) % Math.max(1, n);
    const rotated = all.map((_, i) => all[(this.start + i) % n]!);
    const first = rotated.filter((l) => this.preferred.has(l));
    this.preferred.clear();
    const lanes = first.length ? [...first, ...rotated.filter((l) => !first.includes(l))] : rotated;
    const result: RoundResult = { ticked: 0, full: false, left: false };
    const ticks: Promise<void>[] = [];
    if (this.hinted.size || this.held.size || this.given.size || this.inbox.waiting)
      result.ticked += await this.hintedRound(this.clock(), ticks);
    for (const lane of lanes) {
      const want = Math.min(share, lane ? this.pool.freeFor(lane) : this.pool.free());
      if (want <= 0) continue;
      const now = this.clock();
      const skipping = this.skippedIn(lane, now);
      const got = await this.claim(now, want + skipping, lane ? { workflow: lane } : {});
      this.stats.polls++;
      if (got.length >= want + skipping) result.full = true;
      result.ticked += this.take(got, now, lane || '*', ticks);
    }
    // Last, the inbox's own lane (a backstop): signals whose notice no worker acted on.
    if (this.inbox.polled && this.pool.free() > 0) {
      const now = this.clock();
      result.ticked += this.take(await this.inbox.claimLeft(now, this.pool.free()), now, '*', ticks);
    }
    await Promise.all(ticks);
    result.left = this.namedDue(this.clock());
    return result;
  }

  /** Whether an instance a notice named (held, handed over or hinted) is due by `now` and not yet taken. */
  namedDue(now: number): boolean {
    if (this.inbox.waiting) return true;
    for (const named of [this.held, this.given]) for (const h of named.values()) if (h.at <= now) return true;
    for (const at of this.hinted.values()) if (at <= now) return true;
    return false;
  }

  /** Instances of `lane` being skipped now (a lapsed skip is kept to double the next one). */
  private skippedIn(lane: string, now: number): number {
    let count = 0;
    for (const s of this.skips.values()) if (s.until > now && (lane === '' || s.workflow === lane)) count++;
    return Math.min(count, 1000);
  }

  private async tick({ id, snapshot, unclaimed, sent }: Due, now: number): Promise<void> {
    try {
      // A handed-over snapshot was heard by every worker: one that loses the take leaves it to the
      // winner (a write that leaves the instance due announces it again), with no reload.
      const r = await this.runner.handle(
        snapshot
          ? {
              type: 'tick',
              id,
              now,
              wait: 'write',
              loaded: snapshot,
              onConflict: unclaimed ? 'fail' : 'reapply',
              ...(sent ? { sent } : {}),
            }
          : { type: 'tick', id, now, wait: 'write' },
      );
      for (const e of r.refused ?? []) {
        this.stats.errors++;
        this.emit('error', e, 'tick');
      }
      if (r.dueAt === undefined) return; // nothing was due any more: someone else ticked it
      this.stats.ticks++;
      const lag = r.dueAt === null ? 0 : Math.max(0, now - r.dueAt);
      this.stats.lastLagMs = lag;
      if (lag > this.stats.maxLagMs) this.stats.maxLagMs = lag;
      this.emit('lag', lag, id);
      this.skips.delete(id);
    } catch (e) {
      if (isStepfoldError(e, 'NOT_FOUND')) return;
      if (sent?.length && snapshot && (await this.inbox.settle(e, id, sent, snapshot.version))) return;
      if (unclaimed && isStepfoldError(e, 'VERSION_CONFLICT')) {
        this.stats.lostTakes++;
        return;
      }
      if (NOT_MINE.some((code) => isStepfoldError(e, code))) {
        const prior = this.skips.get(id)?.ms ?? 0;
        const ms = Math.min(MAX_SKIP_MS, prior ? prior * 2 : this.skipMs);
        const stored = snapshot ?? (await this.runner.get(id).catch(() => null));
        const until = now + ms;
        this.skips.set(id, { until, ms, workflow: stored?.workflow.name ?? '' });
        this.stats.skipped++;
        this.emit('skipped', id, e, until);
      } else {
        this.stats.errors++;
        this.emit('error', e, 'tick');
      }
      // Not ticked: give the claim back for a worker that can step it (or a later round).
      if (!unclaimed) await this.release([id]);
    }
  }

  private async release(ids: string[]): Promise<void> {
    await this.store.releaseDue?.(ids).catch(() => {});
  }
}
