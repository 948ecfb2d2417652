import { isStepfoldError } from '../errors.js';
import type { Snapshot } from '../snapshot.js';
import type { SentSignal, Store } from '../store/store.js';
import type { WorkerEvents, WorkerStats } from './types.js';

/**
 * A due instance to tick: its id, its snapshot when the store claimed and loaded it at once (or a
 * notice handed it over), and whether this worker holds a claim on it to give back if not ticked.
 */
export interface Due {
  id: string;
  snapshot?: Snapshot | undefined;
  /** Set for an instance a notice handed over: no claim was taken, so none is given back. */
  unclaimed?: true | undefined;
  /** Signals sent to it and waiting in the store's inbox: applied and consumed by the tick's write. */
  sent?: SentSignal[] | undefined;
}

/** Codes of an instance this worker cannot step: another worker (with that workflow or version) can. */
export const NOT_MINE = ['UNKNOWN_WORKFLOW', 'UNKNOWN_VERSION', 'DEFINITION_HASH_MISMATCH'] as const;
// Instances named for a claim by id; more are left to the inbox lane.
const MAX_NAMED = 1000;

/**
 * A worker's side of a store's sent-signal inbox (`Store.send`): instances whose signals are to be
 * claimed by id (their notice carried no snapshot, or the write applying them lost a race), the
 * inbox's lane (signals left over a second), and what to do when applying them fails. Inert on a
 * store without `claimSent`.
 */
export class SentInbox {
  /** Instances whose sent signals the next round claims by id. */
  private readonly named = new Set<string>();
  /** Named instances another worker was to apply first: nothing found there is a lost take. */
  private readonly standby = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly stats: WorkerStats,
    private readonly emit: <K extends keyof WorkerEvents>(k: K, ...a: Parameters<WorkerEvents[K]>) => void,
    /** Asks the worker for a round now. */
    private readonly roundNow: () => void,
  ) {}

  /** Whether the store has an inbox to poll. */
  get polled(): boolean {
    return this.store.claimSent !== undefined;
  }

  /** Instances waiting for a claim by id. */
  get waiting(): number {
    return this.named.size;
  }

  /** Has the next round claim the signals sent to `id` by id. False when the store has no inbox or too many are named. */
  name(id: string, standby = false): boolean {
    if (!this.polled || this.named.size >= MAX_NAMED) return false;
    this.named.add(id);
    if (standby) this.standby.add(id);
    return true;
  }

  /** Claims the signals of up to `n` named instances (no lease: the write that applies them is conditional). */
  async claimNamed(now: number, n: number): Promise<Due[]> {
    const ids = [...this.named].slice(0, n);
    if (ids.length === 0) return [];
    for (const id of ids) this.named.delete(id);
    const got = await this.claim(now, ids.length, ids);
    countLostTakes(this.standby, ids, got, this.stats);
    return got;
  }

  /** The inbox's lane: up to `n` instances with signals left over a second, their signals leased. */
  claimLeft(now: number, n: number): Promise<Due[]> {
    return this.polled && n > 0 ? this.claim(now, n) : Promise.resolve([]);
  }

  private async claim(now: number, n: number, ids?: string[]): Promise<Due[]> {
    const got = await this.store.claimSent!(now, n, ids);
    this.stats.polls++;
    return got.map(({ snapshot, sent }) => ({ id: snapshot.id, snapshot, sent, unclaimed: true }));
  }

  /**
   * After sent signals failed to apply: a lost race claims them again by id at once; a refusal
   * that will not change (`retryable: false`: a payload or inbox limit, an unknown name) drops
   * them, reported as an `error`, so they do not block the instance. True when handled here.
   */
  async settle(e: unknown, id: string, sent: SentSignal[], version: number): Promise<boolean> {
    if (isStepfoldError(e, 'VERSION_CONFLICT')) {
      // Claimed again by id: nothing found means another worker applied them (a lost take);
      // signals still there mean the instance moved on for another reason (a direct signal, say).
      this.named.add(id);
      this.standby.add(id);
      this.roundNow();
      return true;
    }
    if (!isStepfoldError(e) || e.retryable || NOT_MINE.some((code) => isStepfoldError(e, code))) return false;
    const seqs = sent.map((p) => p.seq);
    await this.store.dropSent?.(id, seqs, version).catch(() => {});
    this.stats.errors++;
    this.emit('error', e, 'tick');
    return true;
  }
}

/**
 * After a claim by id of `ids`: each one this worker stood by for (in `standby`, removed now) that
 * the claim did not find was taken by the worker whose turn it was, a lost take.
 */
export function countLostTakes(
  standby: Set<string>,
  ids: readonly string[],
  got: readonly Due[],
  stats: WorkerStats,
): void {
  if (standby.size === 0) return;
  const found = new Set(got.map((d) => d.id));
  for (const id of ids) if (standby.delete(id) && !found.has(id)) stats.lostTakes++;
}
