import type { Snapshot } from '../snapshot.js';
import type { SentSignal } from '../store/store.js';

/**
 * How the worker knows of a named instance:
 * - `hint`: a notice (or its own write) named it and its due time: claimed by id once due;
 * - `held`: claimed ahead of its due time, its snapshot kept: ticked then with no query;
 * - `given`: a notice handed its snapshot over (a task queued for any worker): ticked from it with
 *   no claim, the write conditional on its version;
 * - `sent`: signals were sent to it: claimed from the store's inbox by id.
 */
export type Via = 'hint' | 'held' | 'given' | 'sent';

/** One named instance the worker will take once due. */
export interface Named {
  id: string;
  via: Via;
  /** Due time (epoch ms); a `sent` entry is due when named. */
  at: number;
  snapshot?: Snapshot | undefined;
  sent?: SentSignal[] | undefined;
  /** Another worker was to take it first: found gone, that is a lost take. */
  standby?: boolean | undefined;
}

/** What one round takes from the queue, by how each is taken. */
export interface TakenNamed {
  /** `held` and `given`: ticked from their snapshots. */
  ready: Named[];
  /** `sent`: their signals claimed from the inbox by id. */
  sent: Named[];
  /** `hint`: claimed by id. */
  hinted: Named[];
}

/**
 * How long after its due time a handed-over snapshot is ticked from as it is. One that waited longer
 * (for a free slot) was most likely taken by another worker meanwhile: its write would lose its race,
 * so it is claimed by id instead, which finds nothing once another worker took it.
 */
export const GIVEN_FRESH_MS = 1_000;

/** Named instances remembered at most (beyond that, the lanes find them). */
export const MAX_NAMED = 1000;
/** Instances claimed ahead and held at most: each delays its instance by its lease if the worker dies. */
export const MAX_HELD = 100;

const ORDER: readonly Via[] = ['held', 'given', 'sent', 'hint'];
const keyOf = (via: Via, id: string) => `${via}\u0000${id}`;

/**
 * The one queue of instances a worker knows by name, whatever told it: at most one entry per
 * instance and way, one cap, and one walk (`take`) that serves held and handed-over instances
 * first (no query), then inbox claims, then claims by id.
 */
export class NamedDue {
  private readonly entries = new Map<string, Named>();
  private heldCount = 0;

  constructor(
    private readonly max = MAX_NAMED,
    private readonly maxHeld = MAX_HELD,
  ) {}

  /** Entries waiting. */
  get size(): number {
    return this.entries.size;
  }

  /** The entry for `id` taken this way, if any. */
  get(via: Via, id: string): Named | undefined {
    return this.entries.get(keyOf(via, id));
  }

  /** Whether another instance can be held ahead. */
  get canHold(): boolean {
    return this.heldCount < this.maxHeld;
  }

  /**
   * Remembers `entry` (replacing the same instance's entry of the same way; `held` replaces its
   * `hint`, `given` its `hint` too). False when the queue is full and it is new: the lanes find it.
   */
  put(entry: Named): boolean {
    const key = keyOf(entry.via, entry.id);
    const had = this.entries.get(key);
    if (!had && (entry.via === 'held' ? !this.canHold : this.entries.size >= this.max)) return false;
    if (!had && entry.via === 'held') this.heldCount++;
    // A standby mark stays until the claim it was for is made.
    this.entries.set(key, had?.standby && !entry.standby ? { ...entry, standby: true } : entry);
    if (entry.via === 'held' || entry.via === 'given') this.entries.delete(keyOf('hint', entry.id));
    return true;
  }

  /** Forgets the entry of `id` taken this way. */
  drop(via: Via, id: string): void {
    // The worker drops the held entry of every instance its runner writes: with none held, no key is built.
    if (via === 'held' && this.heldCount === 0) return;
    if (this.entries.delete(keyOf(via, id)) && via === 'held') this.heldCount--;
  }

  /**
   * Takes up to `n` entries due by `now`, held and handed-over ones first, then sent, then hinted.
   * A snapshot that went stale waiting (see {@link GIVEN_FRESH_MS}; a held one whose claim, taken
   * for `leaseMs` from its due time, lapsed) is claimed by id instead, its signals from the inbox.
   */
  take(now: number, n: number, leaseMs = Number.POSITIVE_INFINITY): TakenNamed {
    const out: TakenNamed = { ready: [], sent: [], hinted: [] };
    let left = n;
    for (const via of ORDER) {
      for (const [key, e] of this.entries) {
        if (left <= 0) return out;
        if (e.via !== via || e.at > now) continue;
        this.entries.delete(key);
        if (via === 'held') this.heldCount--;
        left--;
        if (via === 'given' && now - e.at > GIVEN_FRESH_MS) {
          // Another worker's to take by now, most likely: found gone, it is a lost take.
          (e.sent ? out.sent : out.hinted).push({
            id: e.id,
            via: e.sent ? 'sent' : 'hint',
            at: e.at,
            standby: true,
          });
        } else if (via === 'held' && now - e.at >= leaseMs)
          out.hinted.push({ id: e.id, via: 'hint', at: e.at });
        else (via === 'sent' ? out.sent : via === 'hint' ? out.hinted : out.ready).push(e);
      }
    }
    return out;
  }

  /** Whether any entry is due by `now`. */
  anyDue(now: number): boolean {
    for (const e of this.entries.values()) if (e.at <= now) return true;
    return false;
  }

  /** Empties the queue and returns the ids of the instances held (their claims are to be given back). */
  clear(): string[] {
    const held = [...this.entries.values()].filter((e) => e.via === 'held').map((e) => e.id);
    this.entries.clear();
    this.heldCount = 0;
    return held;
  }
}
