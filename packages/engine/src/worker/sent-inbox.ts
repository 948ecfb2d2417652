import { errorKind, isStepfoldError } from '../errors.js';
import type { Snapshot } from '../snapshot.js';
import type { SentSignal, Store } from '../store/store.js';
import type { EmitEvent, WorkerStats } from './types.js';

/**
 * A due instance to tick: its id, its snapshot when the store claimed and loaded it at once (or a
 * notice handed it over), and whether this worker holds a claim on it to give back if not ticked.
 */
export interface Due {
  id: string;
  snapshot?: Snapshot | undefined;
  /** Set for an instance a notice handed over: no claim was taken, so none is given back. */
  unclaimed?: true | undefined;
  /** `snapshot` (and `sent`) came with a wake notice, not from the store: the take's write must find exactly them stored. */
  noticed?: true | undefined;
  /** Signals sent to it and waiting in the store's inbox: applied and consumed by the tick's write. */
  sent?: SentSignal[] | undefined;
  /**
   * Claimed by id after standing by for a task a notice handed to another worker first: a lost
   * race is that worker's take, so the tick gives up with no reload (a lost take).
   */
  standby?: true | undefined;
}

/**
 * True for an instance this worker cannot step because its definitions do not cover it (a
 * `definition` error): another worker, with that workflow or version registered, can.
 */
export const notMine = (e: unknown): boolean => errorKind(e) === 'definition';

/** What became of sent signals that failed to apply. */
export type SentSettled = 'claim-again' | 'dropped' | 'not-handled';

/**
 * A worker's calls to a store's sent-signal inbox (`Store.inbox`): claims by id, the inbox's own
 * lane (signals left over a second), and what to do when applying them fails. Inert on a store
 * without an inbox.
 */
export class SentInbox {
  constructor(
    private readonly store: Store,
    private readonly stats: WorkerStats,
    private readonly emit: EmitEvent,
  ) {}

  /** Whether the store has an inbox to poll. */
  get polled(): boolean {
    return this.store.inbox !== undefined;
  }

  /** Claims the signals sent to `ids` (no lease: the write that applies them is conditional). */
  claimFor(now: number, ids: string[]): Promise<Due[]> {
    return ids.length ? this.claim(now, ids.length, ids) : Promise.resolve([]);
  }

  /** The inbox's lane: up to `n` instances with signals left over a second, their signals leased. */
  claimLeft(now: number, n: number): Promise<Due[]> {
    return this.polled && n > 0 ? this.claim(now, n) : Promise.resolve([]);
  }

  /** A claimed row that cannot be read (or stepped, at a tick): counted and reported, and the rest goes on. */
  readonly unreadable = (e: unknown, where: 'poll' | 'tick' = 'poll'): void => {
    this.stats.unreadable++;
    this.stats.errors++;
    this.emit('error', e, where);
  };

  private async claim(now: number, n: number, ids?: string[]): Promise<Due[]> {
    const got = await this.store.inbox!.claim(now, n, ids, this.unreadable);
    this.stats.polls++;
    return got.map(({ snapshot, sent }) => ({ id: snapshot.id, snapshot, sent, unclaimed: true }));
  }

  /**
   * After sent signals failed to apply: a lost race is to be claimed again by id at once
   * (`claim-again`); a refusal that will not change (`retryable: false`: a payload or inbox limit,
   * an unknown name) drops them, reported as an `error`, so they do not block the instance.
   */
  async settle(e: unknown, id: string, sent: SentSignal[], version: number): Promise<SentSettled> {
    // Claimed again by id: nothing found means another worker applied them (a lost take); signals
    // still there mean the instance moved on for another reason (a direct signal, say).
    if (isStepfoldError(e, 'VERSION_CONFLICT')) return 'claim-again';
    if (!isStepfoldError(e) || e.retryable || notMine(e)) return 'not-handled';
    await this.store.inbox
      ?.drop(
        id,
        sent.map((p) => p.seq),
        version,
      )
      .catch(() => {});
    this.stats.errors++;
    this.emit('error', e, 'tick');
    return 'dropped';
  }
}

/**
 * After a claim by id of `asked`: each one this worker stood by for that the claim did not find
 * was taken by the worker whose turn it was, a lost take.
 */
export function countLostTakes(
  asked: readonly { id: string; standby?: boolean | undefined }[],
  got: readonly Due[],
  stats: WorkerStats,
): void {
  if (!asked.some((a) => a.standby)) return;
  const found = new Set(got.map((d) => d.id));
  for (const a of asked) if (a.standby && !found.has(a.id)) stats.lostTakes++;
}
