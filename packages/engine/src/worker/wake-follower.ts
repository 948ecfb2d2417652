import { backoffDelay } from '../backoff.js';
import type { WakeNotice, WakeSubscription } from '../store/store.js';
import type { Alarm } from './alarm.js';
import type { DuePoller } from './due-poller.js';
import type { ResolvedWorkerOptions } from './options.js';
import type { TakeOrder } from './take-order.js';
import type { EmitEvent, WorkerStats } from './types.js';

/**
 * A worker's side of the store's wake notices: subscribes (again, on the outage schedule, when
 * that fails), turns each notice into what the poller should take (a handed-over snapshot, signals
 * to claim, an id to claim by id) and what the loop should hear, and stands by when a task handed
 * to every worker is another worker's turn first.
 */
export class WakeFollower {
  private subscription: WakeSubscription | undefined;
  private resubscribe: ReturnType<typeof setTimeout> | undefined;
  private readonly standing = new Set<ReturnType<typeof setTimeout>>();
  private closed = false;

  constructor(
    private readonly o: ResolvedWorkerOptions,
    private readonly alarm: Alarm,
    private readonly poller: DuePoller,
    private readonly order: TakeOrder,
    private readonly stats: WorkerStats,
    private readonly emit: EmitEvent,
    /** Told whether the subscription is live (the loop's pause may grow further while it is). */
    private readonly live: (up: boolean) => void,
  ) {}

  /** Subscribes; on failure polling alone finds everything meanwhile, and it is tried again with backoff. */
  async start(failures = 0): Promise<void> {
    const source = this.o.wakes;
    if (!source || this.closed) return;
    try {
      this.subscription = await source.subscribe({
        wake: (hint) => this.heard(hint),
        lost: (error) => {
          this.live(false);
          this.emit('wakeLost', error);
          this.alarm.ring(); // back to the fast pace
        },
        restored: () => {
          this.live(true);
          this.emit('wakeRestored');
          this.alarm.ring(); // notices sent meanwhile are gone: poll once
        },
      });
      this.live(true);
      if (this.closed) await this.subscription.close().catch(() => {});
    } catch (e) {
      this.stats.errors++;
      this.emit('error', e, 'wake');
      this.resubscribe = setTimeout(
        () => void this.start(failures + 1),
        backoffDelay(this.o.outage, failures),
      );
    }
  }

  /** Ends the subscription and every stand-by. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.resubscribe !== undefined) clearTimeout(this.resubscribe);
    for (const timer of this.standing) clearTimeout(timer);
    this.standing.clear();
    await this.subscription?.close().catch(() => {});
  }

  private heard(heard: WakeNotice): void {
    // A wake source is the store's (or anyone's): a time that is not one means "look now", it
    // must not reach the alarm, where NaN stalled polling until the next planned round.
    const hint = Number.isFinite(heard.at) ? heard : { ...heard, at: this.o.clock() };
    this.stats.wakes++;
    this.emit('wake', hint);
    if (hint.workflow !== undefined) this.poller.prefer(hint.workflow);
    const { id } = hint;
    // A task handed to every worker (a snapshot or sent signals): whose turn is it?
    if (id !== undefined && (hint.snapshot?.id === id || hint.sent)) {
      const wait = this.order.delay(id, this.o.clock());
      if (wait > 0) {
        this.standBy(id, hint, wait);
        return;
      }
    }
    const snapshot = this.o.handoffSnapshots ? hint.snapshot : undefined;
    // A busy notice (a task of the instance runs in the worker that wrote it, which named it at its
    // time already) is claimed here a stand-by later: its writer ticks it first, so a timer of one
    // branch is not fired in another worker beside that branch's result (one of the two writes
    // would lose its race).
    const at =
      hint.busy && id !== undefined && !this.poller.namedAt(id, hint.at)
        ? hint.at + this.o.standbyMs
        : hint.at;
    // A snapshot handed over with the notice is taken from as it is (with the signals sent to it);
    // else the id is claimed (its sent signals by id too).
    const named =
      id !== undefined &&
      ((snapshot?.id === id && this.poller.give(snapshot, hint.at, hint.sent)) ||
        (hint.sent ? this.poller.claimSentTo(id) : this.poller.hint(id, at, false, !hint.busy)));
    this.alarm.hear(at, named);
  }

  /** After `wait`, claims `id` by id (its signals, for a send): nothing is found once its taker wrote. */
  private standBy(id: string, hint: WakeNotice, wait: number): void {
    const timer = setTimeout(() => {
      this.standing.delete(timer);
      if (this.closed) return;
      const named = hint.sent ? this.poller.claimSentTo(id, true) : this.poller.hint(id, hint.at, true);
      this.alarm.hear(Math.min(hint.at, this.o.clock()), named);
    }, wait);
    this.standing.add(timer);
  }
}
