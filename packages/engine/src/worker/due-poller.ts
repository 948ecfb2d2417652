import { isStepfoldError } from '../errors.js';
import { runnerPort } from '../runner/port.js';
import type { Runner } from '../runner/types.js';
import type { Snapshot } from '../snapshot.js';
import type { DueQuery, SentSignal, Store } from '../store/store.js';
import { Lanes } from './lanes.js';
import { type Named, NamedDue } from './named-due.js';
import { countLostTakes, type Due, notMine, SentInbox } from './sent-inbox.js';
import type { TaskPool } from './task-pool.js';
import type { EmitEvent, WorkerStats } from './types.js';

/** What one round found. */
export interface RoundResult {
  /** Ids ticked. */
  ticked: number;
  /** Some lane returned all it was asked for: more may be due. */
  full: boolean;
  /** Instances notices named are due and were left for want of a free slot: run another round once one frees. */
  left: boolean;
}

/** What a round polls beyond the named instances: every lane and the inbox's, one claim over every workflow, or nothing. */
export type RoundKind = 'lanes' | 'lease' | 'named';

/** What a {@link DuePoller} works with. */
export interface PollerParts {
  runner: Runner;
  pool: TaskPool;
  stats: WorkerStats;
  emit: EmitEvent;
  clock: () => number;
  /** First skip of an instance this worker cannot step (doubling up to 5 min). */
  skipMs: number;
  /** `single`: one lane for every workflow (a store whose each poll is costly), caps kept by the pool only. */
  lanes: 'workflow' | 'single';
  /** Lease of every claim this poller takes, from the time it claims as of (see `WorkerOptions.claimLeaseMs`). */
  leaseMs: number;
  /** Told of a time something named is due: the due time of an instance claimed ahead, or now for signals to claim again. */
  namedDueAt: (at: number) => void;
}

// A notice of a time at most this far ahead has its instance claimed at once and held until then,
// so the tick at the due time writes without first waiting for a claim. Short: a worker that dies
// holding one delays that instance until the claim lapses (the due time plus the claim lease).
const LOOKAHEAD_MS = 2_000;

/**
 * One poll round of a worker: first the instances it knows by name (see {@link NamedDue}), then
 * each workflow's lane (`listDue`/`claimDue` with `{ workflow }`) for its share of the free slots,
 * then the inbox's lane; it ticks what comes back. A store with `claimDue` returns the snapshots
 * with the claim, so no load follows. Instances it cannot step are skipped for a growing period,
 * their claims given back, and the lane asks for that many more ids, so they never fill a batch.
 */
export class DuePoller {
  private readonly named = new NamedDue();
  private readonly lanes: Lanes;
  private readonly inbox: SentInbox;
  private readonly store: Store;
  /** Every claim this poller takes: its lease, and its token, so it gives back only its own. */
  private readonly lease: { leaseMs: number; token: string };
  /** Set on stop: a claim ahead that lands later is given straight back. */
  private closed = false;

  constructor(private readonly p: PollerParts) {
    this.lease = { leaseMs: p.leaseMs, token: crypto.randomUUID() };
    this.store = p.runner.store;
    this.lanes = new Lanes(p.lanes, () => p.runner.workflows, p.skipMs);
    this.inbox = new SentInbox(this.store, p.stats, p.emit);
  }

  /** Polls `workflow`'s lane first in the next round (a wake notice named it). */
  prefer(workflow: string): void {
    this.lanes.prefer(workflow);
  }

  /**
   * A notice named instance `id`, due at `at`: claimed by id in the first round from then on, or
   * right away and held until `at` when that is soon. False when not remembered (the store cannot
   * claim by id, or too many are): only the lanes will find it.
   */
  hint(id: string, at: number, standby = false, ahead = true): boolean {
    // A store without wake notices (MongoDB, DynamoDB) is polled in batches: claiming this worker's
    // own timers one by one there was measured slower than letting the lanes find them on time.
    if (!this.store.claims || !this.store.wakes) return false;
    if (this.named.get('held', id)) return true;
    const before = this.named.get('hint', id)?.at;
    if (!this.named.put({ id, via: 'hint', at, standby })) return false;
    // The same time heard twice (a worker's own write and its notice): one claim ahead is enough.
    // Not ahead (`ahead` false) when a task of the instance runs elsewhere: its result would make
    // the held snapshot stale (a lost race at the tick); the runner that writes it claims ahead.
    const soon = at - this.p.clock();
    if (ahead && before !== at && soon > 0 && soon <= LOOKAHEAD_MS && this.named.canHold)
      void this.reserve(id, at);
    return true;
  }

  /** Whether this worker named instance `id` due at `at` itself (its runner's write), or holds it. */
  namedAt(id: string, at: number): boolean {
    return this.named.get('hint', id)?.at === at || this.named.get('held', id) !== undefined;
  }

  /**
   * A notice handed over `snapshot`, due at `at` (a task queued for any worker): ticked from it in
   * the first round from then on, with no claim and no load. The write that takes the task is
   * conditional on the snapshot's version, so of the workers that heard the notice one wins; the
   * others give up with no reload (`lostTakes`). False when too many are remembered: claim it by id instead.
   */
  give(snapshot: Snapshot, at: number, sent?: SentSignal[]): boolean {
    if (this.named.get('held', snapshot.id) && !sent) return true;
    // The newest notice wins: it carries the snapshot a take must be conditional on (and every
    // signal sent before it that is still waiting).
    return this.named.put({ id: snapshot.id, via: 'given', at, snapshot, sent });
  }

  /** Signals were sent to `id` (a notice without its snapshot, or one this worker stood by for): claimed by id next round. */
  claimSentTo(id: string, standby = false): boolean {
    return this.inbox.polled && this.named.put({ id, via: 'sent', at: this.p.clock(), standby });
  }

  /**
   * Claims `id` as of its due time `at` (the claim lasts from `at` for the lease) and holds its
   * snapshot. Nothing held (another worker has it, or it moved on): the hint stays, and the round
   * at `at` claims by id as usual.
   */
  private async reserve(id: string, at: number): Promise<void> {
    let got: Snapshot | undefined;
    try {
      // Claimed as of `at`: the lease runs from the due time, so a worker killed holding it delays
      // the instance by the lease, not by however far ahead it was claimed.
      [got] = await this.store.claims!.claimDue(at, 1, {
        ids: [id],
        ...this.lease,
        onUnreadable: this.inbox.unreadable,
      });
      this.p.stats.polls++;
    } catch {
      return; // the round at `at` tries again, and reports what fails
    }
    if (!got) return;
    const due = got.wakeAt;
    if (
      this.closed ||
      typeof due !== 'number' ||
      due > at ||
      !this.named.put({ id, via: 'held', at: due, snapshot: got })
    ) {
      await this.release([id]);
      return;
    }
    this.p.namedDueAt(due);
  }

  /**
   * This worker's runner saved instance `id`. A save ends every claim on it, so one held ahead is
   * gone: another worker may claim it now and tick it at the same time as this one, and one of
   * the two ticks would lose its race. Forgotten, so the write's own notice claims ahead again.
   */
  wrote(id: string): void {
    this.named.drop('held', id);
  }

  /** Forgets every named instance and gives back the claims of those held; claims ahead from now on are given straight back (on stop). */
  async releaseHeld(): Promise<void> {
    this.closed = true;
    const held = this.named.clear();
    if (held.length) await this.release(held);
  }

  /** The claim of one poll: snapshots with the claim where the store can, else ids. */
  private async claim(now: number, n: number, query: DueQuery & { ids?: string[] }): Promise<Due[]> {
    const leased = { ...query, ...this.lease, onUnreadable: this.inbox.unreadable };
    // A poll counts once the store answered it (as the inbox's claims do).
    if (this.store.claims) {
      const snapshots = await this.store.claims.claimDue(now, n, leased);
      this.p.stats.polls++;
      return snapshots.map((snapshot) => ({ id: snapshot.id, snapshot }));
    }
    const ids = await this.store.listDue(now, n, leased);
    this.p.stats.polls++;
    return ids.map((id) => ({ id }));
  }

  /** Ticks the named instances due by `now`: held and handed-over ones from their snapshots, then inbox claims and claims by id. */
  private async namedRound(now: number, ticks: Promise<void>[]): Promise<number> {
    const { ready, sent, hinted } = this.named.take(now, this.p.pool.free(), this.lease.leaseMs);
    const asDue = (e: Named): Due =>
      e.via === 'given'
        ? {
            id: e.id,
            snapshot: e.snapshot,
            unclaimed: true,
            noticed: true,
            ...(e.sent ? { sent: e.sent } : {}),
          }
        : { id: e.id, snapshot: e.snapshot };
    let ticked = ready.length ? this.take(ready.map(asDue), now, '*', ticks) : 0;
    if (sent.length) {
      const got = await this.inbox.claimFor(
        now,
        sent.map((e) => e.id),
      );
      countLostTakes(sent, got, this.p.stats);
      ticked += this.take(got, now, '*', ticks);
    }
    if (hinted.length === 0) return ticked;
    // Another worker may have taken some, or they moved on: the lanes find whatever is left.
    const got = await this.claim(now, hinted.length, { ids: hinted.map((e) => e.id) });
    countLostTakes(hinted, got, this.p.stats);
    const stood = hinted.filter((e) => e.standby);
    if (stood.length) for (const d of got) if (stood.some((e) => e.id === d.id)) d.standby = true;
    return ticked + this.take(got, now, '*', ticks);
  }

  /** Ticks what a poll claimed, giving back claims of instances this worker skips. */
  private take(got: Due[], now: number, lane: string, ticks: Promise<void>[]): number {
    const mine: Due[] = [];
    const notMine: string[] = [];
    for (const d of got) {
      if (!this.lanes.skipping(d.id, now)) mine.push(d);
      else if (!d.unclaimed) notMine.push(d.id);
    }
    // Claimed with the rest: give them straight back for a worker that can step them.
    if (notMine.length) ticks.push(this.release(notMine));
    if (mine.length === 0) return 0;
    this.p.stats.claimed += mine.length;
    this.p.emit(
      'claimed',
      mine.map((d) => d.id),
      lane,
    );
    for (const d of mine) ticks.push(this.tick(d, now));
    return mine.length;
  }

  /**
   * Ticks the named instances that are due, then polls: with `lanes`, every lane once and the
   * inbox's lane; with `lease`, one claim over every workflow (the cheap round that finds a lease
   * lapsed with its worker between lane rounds); with `named`, nothing more. A failed poll rejects
   * (the caller backs off).
   */
  async round(kind: RoundKind = 'lanes'): Promise<RoundResult> {
    const result: RoundResult = { ticked: 0, full: false, left: false };
    const ticks: Promise<void>[] = [];
    if (this.named.size) result.ticked += await this.namedRound(this.p.clock(), ticks);
    if (kind === 'lanes') {
      const { lanes, share } = this.lanes.next(this.p.pool.free());
      for (const lane of lanes) {
        const want = Math.min(share, lane ? this.p.pool.freeFor(lane) : this.p.pool.free());
        if (want <= 0) continue;
        await this.poll(lane, want, result, ticks);
      }
      // Last, the inbox's own lane (a backstop): signals whose notice no worker acted on.
      if (this.inbox.polled && this.p.pool.free() > 0) {
        const now = this.p.clock();
        result.ticked += this.take(await this.inbox.claimLeft(now, this.p.pool.free()), now, '*', ticks);
      }
    } else if (kind === 'lease' && this.p.pool.free() > 0) {
      // Instances of workflows this worker cannot step come back too: skipped, given straight back.
      await this.poll('', this.p.pool.free(), result, ticks);
    }
    await Promise.all(ticks);
    result.left = this.namedDue(this.p.clock());
    return result;
  }

  /** One lane's claim (`''`: every workflow) for `want` instances beyond those it skips, ticked. */
  private async poll(lane: string, want: number, result: RoundResult, ticks: Promise<void>[]): Promise<void> {
    const now = this.p.clock();
    const skipping = this.lanes.skippedIn(lane, now);
    const got = await this.claim(now, want + skipping, lane ? { workflow: lane } : {});
    if (got.length >= want + skipping) result.full = true;
    result.ticked += this.take(got, now, lane || '*', ticks);
  }

  /** Whether an instance it knows by name is due by `now` and not yet taken. */
  namedDue(now: number): boolean {
    return this.named.anyDue(now);
  }

  private async tick({ id, snapshot, unclaimed, noticed, sent, standby }: Due, now: number): Promise<void> {
    const { runner, stats, emit } = this.p;
    // A handed-over snapshot was heard by every worker: one that loses the take leaves it to the
    // winner (a write that leaves the instance due announces it again), with no reload. So does a
    // worker that stood by for another's take and claimed it: losing then means the take was made.
    const taking = unclaimed || standby;
    try {
      const r = await runnerPort(runner).tick(
        snapshot
          ? {
              id,
              now,
              loaded: snapshot,
              // A claimed snapshot that loses its race gives up too: the winner's save ended the
              // claim and left the instance in the due order as it wrote it, so whoever claims it
              // next ticks the new version (a reload here would race that claim a second time).
              onConflict: 'fail',
              ...(noticed ? { noticed } : {}),
              ...(sent ? { sent } : {}),
            }
          : { id, now },
      );
      for (const e of r.refused) {
        stats.errors++;
        emit('error', e, 'tick');
      }
      if (r.dueAt === undefined) return; // nothing was due any more: someone else ticked it
      stats.ticks++;
      const lag = r.dueAt === null ? 0 : Math.max(0, now - r.dueAt);
      stats.lastLagMs = lag;
      if (lag > stats.maxLagMs) stats.maxLagMs = lag;
      emit('lag', lag, id, r.snapshot.workflow.name);
      this.lanes.stepped(id);
    } catch (e) {
      if (isStepfoldError(e, 'NOT_FOUND')) return;
      const unsteppable = isStepfoldError(e, 'INVALID_SNAPSHOT');
      if (isStepfoldError(e, 'NOTICE_MISMATCH') || (unsteppable && noticed)) {
        // A notice described an instance that is not stored (forged, or corrupted): report it and
        // find the instance as stored, its signals and its due time, the way a notice-less one is.
        stats.refusedNotices++;
        emit('error', e, 'tick');
        if (sent?.length) this.claimSentTo(id);
        else this.hint(id, snapshot?.wakeAt ?? now);
        this.p.namedDueAt(this.p.clock());
        return;
      }
      if (unsteppable) {
        // Stored, read, but not steppable as it is (parts that contradict each other): kept out as
        // a row the claim could not read is. Its claim is kept until the lease lapses, so it does
        // not come back in every poll, and its sent signals stay for the row once it is mended.
        this.inbox.unreadable(e, 'tick');
        return;
      }
      if (sent?.length && snapshot) {
        const settled = await this.inbox.settle(e, id, sent, snapshot.version);
        if (settled === 'claim-again') {
          this.claimSentTo(id, true);
          this.p.namedDueAt(this.p.clock());
        }
        if (settled !== 'not-handled') return;
      }
      // The winner's save ended any claim this worker held.
      if (snapshot && isStepfoldError(e, 'VERSION_CONFLICT')) {
        if (taking) stats.lostTakes++;
        return;
      }
      if (notMine(e)) {
        const stored = snapshot ?? (await runner.get(id).catch(() => null));
        const until = this.lanes.skip(id, stored?.workflow.name ?? '', now);
        stats.skipped++;
        emit('skipped', id, e, until);
      } else {
        stats.errors++;
        emit('error', e, 'tick');
      }
      // Not ticked: give the claim back for a worker that can step it (or a later round).
      if (!unclaimed) await this.release([id]);
    }
  }

  private async release(ids: string[]): Promise<void> {
    await this.store.claims?.release(ids, this.lease.token).catch(() => {});
  }
}
