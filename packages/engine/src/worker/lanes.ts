const MAX_SKIP_MS = 5 * 60_000;
// Skipped instances counted into one lane's request at most.
const MAX_SKIPPED_ASKED = 1000;

/**
 * A worker's lanes: one per workflow (or one for all, `''`, with `single`), polled in a rotating
 * order so each workflow is first in turn, a lane a wake notice named first; and the instances this
 * worker cannot step (an unknown workflow or version), skipped for a doubling period so they never
 * fill a lane's batch.
 */
export class Lanes {
  private start = 0;
  /** Lanes a wake notice named since the last round. */
  private readonly preferred = new Set<string>();
  /** id → when to try again, how long the last skip was, and its workflow. */
  private readonly skips = new Map<string, { until: number; ms: number; workflow: string }>();

  constructor(
    private readonly mode: 'workflow' | 'single',
    private readonly workflows: () => readonly string[],
    private readonly skipMs: number,
  ) {}

  /** Polls `workflow`'s lane first in the next round (a wake notice named it). */
  prefer(workflow: string): void {
    if (this.mode === 'workflow') this.preferred.add(workflow);
  }

  /** This round's lanes in order (named ones first, then from one further along each round), and each one's share of `free` slots. */
  next(free: number): { lanes: string[]; share: number } {
    const all = this.mode === 'single' ? [''] : this.workflows();
    const n = all.length;
    const share = Math.max(1, Math.ceil(free / Math.max(1, n)));
    this.start = (this.start + 1) % Math.max(1, n);
    const rotated = all.map((_, i) => all[(this.start + i) % n]!);
    const first = rotated.filter((l) => this.preferred.has(l));
    this.preferred.clear();
    return {
      lanes: first.length ? [...first, ...rotated.filter((l) => !first.includes(l))] : rotated,
      share,
    };
  }

  /** Whether `id` is being skipped at `now`. */
  skipping(id: string, now: number): boolean {
    return (this.skips.get(id)?.until ?? 0) > now;
  }

  /** How many instances of `lane` (`''`: any) are skipped at `now`: a poll asks for that many more. */
  skippedIn(lane: string, now: number): number {
    let count = 0;
    for (const s of this.skips.values()) if (s.until > now && (lane === '' || s.workflow === lane)) count++;
    return Math.min(count, MAX_SKIPPED_ASKED);
  }

  /** Skips `id` (of `workflow`) from `now`, twice as long as last time; returns until when. */
  skip(id: string, workflow: string, now: number): number {
    const prior = this.skips.get(id)?.ms ?? 0;
    const ms = Math.min(MAX_SKIP_MS, prior ? prior * 2 : this.skipMs);
    const until = now + ms;
    this.skips.set(id, { until, ms, workflow });
    return until;
  }

  /** `id` was stepped: its next skip starts short again. */
  stepped(id: string): void {
    this.skips.delete(id);
  }
}
