import type { KindSet } from '../reducer/kind-table.js';
import { isTerminal, type Snapshot, type Status } from '../snapshot.js';
import { type Store, snapshotBytes } from '../store/store.js';
import type { Migration } from './define.js';
import { planMigration } from './plan.js';
import { type ReasonCount, ReasonTally } from './tally.js';

/** Counts so far, reported after every page of a dry run. */
export interface DryRunProgress {
  read: number;
  migratable: number;
  refused: number;
  finished: number;
  otherVersion: number;
}

/** Options of {@link dryRunMigration}. */
export interface DryRunOptions {
  /** Only instances in this status (default: every status). */
  status?: Status | undefined;
  /** Instances read per `store.list` page (default 500). */
  pageSize?: number | undefined;
  /** Instance ids kept per reason (default 5). */
  samples?: number | undefined;
  /** The migration's time (default `Date.now()`). */
  at?: number | undefined;
  /** Called after every page. */
  onProgress?: ((progress: DryRunProgress) => void) | undefined;
  /** Step kinds beyond the core the new version uses (`[composition]`), as the runner that moves them has. */
  kinds?: readonly KindSet[] | undefined;
}

/** What {@link dryRunMigration} found. */
export interface DryRunReport {
  /** Instances of the workflow read. */
  total: number;
  outcomes: {
    /** Would move. */
    migratable: number;
    /** Would be refused (see `reasons`). */
    refused: number;
    /** Have finished: nothing to move. */
    finished: number;
    /** Run another version of the workflow than the migration's `from`. */
    otherVersion: number;
  };
  /** Every distinct reason, most frequent first, with a few instance ids each. */
  reasons: ReasonCount[];
  /**
   * Instances that would move whose search attributes change (a declaration added, removed, or
   * read from another path): the store's attribute index changes with them.
   */
  attributesChanged: number;
  /** The largest snapshot after migration (UTF-8 bytes of its JSON), or null if none would move. */
  largest: { id: string; bytes: number } | null;
  /** Wall time of the run. */
  ms: number;
}

/** An instance that is not the migration's business: finished, or on another version. */
export function skipped(m: Migration, s: Snapshot): 'finished' | 'otherVersion' | undefined {
  const w = s.workflow;
  if (w.name !== m.from.definition.name || w.version !== m.from.definition.version) return 'otherVersion';
  if (isTerminal(s.status)) return 'finished';
  return undefined;
}

/**
 * The fleet-wide dry run: reads every stored instance of the migration's workflow (or those in
 * `status`), page by page, plans each one's migration in memory (the step rules, the recipe, the
 * validation and one reducer tick), and reports counts by outcome, every distinct reason with
 * sample ids, and the largest snapshot after. Keeps only counts, samples and the largest, so
 * memory stays flat whatever the fleet's size. Writes nothing.
 *
 * @example
 * const report = await dryRunMigration(store, toV2, { onProgress: (p) => console.error(p.read) });
 * if (report.outcomes.refused > 0) process.exitCode = 1; // a deploy gate
 */
export async function dryRunMigration(
  store: Store,
  m: Migration,
  options: DryRunOptions = {},
): Promise<DryRunReport> {
  const started = Date.now();
  const at = options.at ?? Date.now();
  const limit = options.pageSize ?? 500;
  const tally = new ReasonTally(options.samples ?? 5);
  const counts: DryRunProgress = { read: 0, migratable: 0, refused: 0, finished: 0, otherVersion: 0 };
  let largest: { id: string; bytes: number } | null = null;
  let attributesChanged = 0;
  let cursor: string | null = null;
  const workflow = m.from.definition.name;
  do {
    const page = await store.list({ workflow, status: options.status, limit, cursor });
    for (const s of page.items) {
      counts.read++;
      const skip = skipped(m, s);
      if (skip) {
        counts[skip]++;
        continue;
      }
      const plan = planMigration(m, s, { at, kinds: options.kinds });
      if (!plan.ok) {
        counts.refused++;
        tally.add(s.id, plan.reasons);
        continue;
      }
      counts.migratable++;
      if (JSON.stringify(s.search ?? {}) !== JSON.stringify(plan.snapshot.search ?? {})) attributesChanged++;
      const bytes = snapshotBytes(JSON.stringify(plan.snapshot));
      if (!largest || bytes > largest.bytes) largest = { id: s.id, bytes };
    }
    cursor = page.cursor;
    options.onProgress?.({ ...counts });
  } while (cursor !== null);
  const { read: total, ...outcomes } = counts;
  return { total, outcomes, reasons: tally.list(), attributesChanged, largest, ms: Date.now() - started };
}
