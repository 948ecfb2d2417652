import { compileWorkflow } from '../definition/compile.js';
import { isStepfoldError, NotFoundError, RegistryError } from '../errors.js';
import type { KindSet } from '../reducer/kind-table.js';
import type { AnyDefinition } from '../runner/handler-types.js';
import { runnerInternals } from '../runner/port.js';
import type { Runner, WorkflowNameOf } from '../runner/types.js';
import type { Snapshot, Status } from '../snapshot.js';
import type { Store } from '../store/store.js';
import type { Migration } from './define.js';
import { skipped } from './dry-run.js';
import { MigrationRefusedError } from './migration-refused.js';
import { planMigration } from './plan.js';
import { type ReasonCount, ReasonTally } from './tally.js';

/** How often a move that lost a race is reloaded and planned again before giving up. */
const CONFLICT_RETRIES = 5;

/**
 * Nothing when the runner may register the migration's target (an untyped runner or migration, or
 * a target among the runner's typed workflows); else the message the compiler's first line shows.
 */
export type TargetCheck<W extends readonly AnyDefinition[], T> = unknown extends T
  ? unknown
  : string extends WorkflowNameOf<W>
    ? unknown
    : T extends W[number]
      ? unknown
      : "the runner does not register the migration's target: add it to the runner's workflows";

/** Options of {@link migrate}. */
export interface MigrateOptions {
  /** The migration's time (default the runner's clock). */
  at?: number | undefined;
}

/** What a move writes with: the runner's store, clock and step kinds. */
interface Mover {
  store: Store;
  clock: () => number;
  kinds: readonly KindSet[] | undefined;
}

/** The runner's store, clock and kinds, after checking it registers the migration's target exactly as given. */
function prepare(runner: Runner, m: Migration): Mover {
  const { registry, clock } = runnerInternals(runner);
  const { name, version } = m.to.definition;
  // UNKNOWN_WORKFLOW / UNKNOWN_VERSION when the runner could not step a moved instance.
  const registered = compileWorkflow(registry.resolve(name, version));
  if (registered.hash !== m.to.hash)
    throw new RegistryError(
      'DEFINITION_HASH_MISMATCH',
      `the runner registers another ${name} v${version} than the migration's target (hash ${registered.hash.slice(0, 12)} vs ${m.to.hash.slice(0, 12)})`,
    );
  return { store: runner.store, clock, kinds: registry.kinds };
}

/** Loads, plans and writes one instance; on a lost race reloads and plans again. */
async function moveOne(
  { store, kinds }: Mover,
  m: Migration,
  id: string,
  at: number,
  first?: Snapshot,
): Promise<Snapshot> {
  let current = first ?? (await store.load(id));
  for (let tries = 0; ; tries++) {
    if (!current) throw new NotFoundError(id);
    const plan = planMigration(m, current, { at, kinds });
    if (!plan.ok) throw new MigrationRefusedError(id, plan.reasons);
    try {
      await store.save(plan.snapshot, current.version);
      return plan.snapshot;
    } catch (e) {
      if (!isStepfoldError(e, 'VERSION_CONFLICT') || tries >= CONFLICT_RETRIES) throw e;
    }
    current = await store.load(id);
  }
}

/**
 * Moves one instance to the migration's new version with one conditional write, and returns the
 * snapshot written. Refused (`MIGRATION_REFUSED`, with `reasons`) when it holds anything that has
 * no place in the new version; nothing is written then. The runner must register the target
 * (`UNKNOWN_VERSION` before anything is read otherwise). A lost race reloads and plans again.
 *
 * @example
 * const moved = await migrate(runner, toV2, 'order-42');
 * moved.workflow.version; // 2
 */
export async function migrate<W extends readonly AnyDefinition[], T>(
  runner: Runner<W>,
  m: Migration<unknown, T>,
  // The check sits on the id (short to print), so the first line is its message.
  id: string & NoInfer<TargetCheck<W, T>>,
  options: MigrateOptions = {},
): Promise<Snapshot> {
  const mover = prepare(runner as unknown as Runner, m as Migration);
  return moveOne(mover, m, id, options.at ?? mover.clock());
}

/** Options of {@link migrateAll}. */
export interface MigrateAllOptions extends MigrateOptions {
  /** Only instances in this status (default: every status). */
  status?: Status | undefined;
  /** Instances read per page (default 500). */
  pageSize?: number | undefined;
  /** Instance ids kept per reason (default 5). */
  samples?: number | undefined;
  /** Called after every page with the counts so far. */
  onProgress?: ((progress: MigrateAllProgress) => void) | undefined;
}

/** Counts so far, reported after every page of {@link migrateAll}. */
export interface MigrateAllProgress {
  read: number;
  migrated: number;
  refused: number;
  /** Lost every race against other writers (try again later). */
  conflicted: number;
  finished: number;
  otherVersion: number;
}

/** What {@link migrateAll} did. */
export interface MigrateAllReport {
  total: number;
  outcomes: Omit<MigrateAllProgress, 'read'>;
  /** Why instances were refused, most frequent first, with a few ids each. */
  reasons: ReasonCount[];
  ms: number;
}

/**
 * Moves every instance of the migration's workflow (or those in `status`) that can move, one
 * conditional write each, page by page; refused ones are left untouched and counted by reason,
 * finished ones and those on other versions are skipped.
 *
 * @example
 * const report = await migrateAll(runner, toV2, { status: 'waiting' });
 * console.log(`${report.outcomes.migrated} moved, ${report.outcomes.refused} refused`);
 */
export async function migrateAll<W extends readonly AnyDefinition[], T>(
  runner: Runner<W>,
  m: Migration<unknown, T> & NoInfer<TargetCheck<W, T>>,
  options: MigrateAllOptions = {},
): Promise<MigrateAllReport> {
  const started = Date.now();
  const mover = prepare(runner as unknown as Runner, m as Migration);
  const { store, clock } = mover;
  const at = options.at ?? clock();
  const tally = new ReasonTally(options.samples ?? 5);
  const counts: MigrateAllProgress = {
    read: 0,
    migrated: 0,
    refused: 0,
    conflicted: 0,
    finished: 0,
    otherVersion: 0,
  };
  let cursor: string | null = null;
  do {
    const page = await store.list({
      workflow: m.from.definition.name,
      status: options.status,
      limit: options.pageSize ?? 500,
      cursor,
    });
    for (const s of page.items) {
      counts.read++;
      const skip = skipped(m, s);
      if (skip) {
        counts[skip]++;
        continue;
      }
      try {
        await moveOne(mover, m, s.id, at, s);
        counts.migrated++;
      } catch (e) {
        if (e instanceof MigrationRefusedError) {
          counts.refused++;
          tally.add(s.id, e.reasons);
        } else if (isStepfoldError(e, 'VERSION_CONFLICT')) counts.conflicted++;
        // Gone meanwhile (deleted): nothing to move.
        else if (!isStepfoldError(e, 'NOT_FOUND')) throw e;
      }
    }
    cursor = page.cursor;
    options.onProgress?.({ ...counts });
  } while (cursor !== null);
  const { read: total, ...outcomes } = counts;
  return { total, outcomes, reasons: tally.list(), ms: Date.now() - started };
}
