import {
  createRunner,
  NotFoundError,
  type Snapshot,
  type Status,
  type Store,
  type WorkflowDefinition,
} from '@stepfold/engine';
import {
  type DryRunReport,
  dryRunMigration,
  type MigrateAllReport,
  type Migration,
  migrate,
  migrateAll,
  planMigration,
  type ReasonCount,
} from '@stepfold/engine/migrations';
import type { Command } from 'commander';
import { loadDefinitions } from '../definitions.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { CLI_KINDS } from '../kinds.js';
import { importUserModule, parseModuleSpec } from '../modules.js';
import {
  type ActingOptions,
  definitionPaths,
  definitionsOption,
  jsonOption,
  positiveInt,
  requireDefinitions,
  storeOption,
} from '../options.js';
import { createOutput, type Output, table } from '../output.js';
import { storeUrlOf, withStore } from '../store-url.js';
import { statusOf } from './list.js';

interface MigrateOptions extends ActingOptions {
  migration: string;
  id?: string | undefined;
  all?: boolean | undefined;
  status?: Status | undefined;
  dryRun?: boolean | undefined;
  failOnRefused?: boolean | undefined;
  pageSize: number;
}

function looksLikeMigration(v: unknown): v is Migration {
  const m = v as Partial<Migration> | null;
  return (
    typeof m === 'object' &&
    m !== null &&
    typeof m.from?.definition === 'object' &&
    typeof m.to?.definition === 'object' &&
    typeof m.steps === 'object'
  );
}

/** The migration `module#export` names: that export, else the default, else the module's only migration. */
export async function loadMigration(spec: string): Promise<Migration> {
  const { path, exportName: name } = parseModuleSpec(spec);
  const mod = await importUserModule(path, 'migration');
  if (name !== undefined) {
    if (!looksLikeMigration(mod[name]))
      throw new UsageError(`${path} exports no migration named ${name} (build one with defineMigration)`);
    return mod[name];
  }
  if (looksLikeMigration(mod['default'])) return mod['default'];
  const found = Object.entries(mod).filter(([, v]) => looksLikeMigration(v));
  if (found.length !== 1)
    throw new UsageError(
      found.length
        ? `${path} exports ${found.length} migrations (${found.map(([k]) => k).join(', ')}); pick one with ${path}#<name>`
        : `${path} exports no migration (build one with defineMigration)`,
    );
  return found[0]![1] as Migration;
}

const count = (n: number) => n.toLocaleString('en-US');

/** The progress line of a page, on stderr (stdout stays the result's). */
function progress(parts: Record<string, number>): void {
  const [first, ...rest] = Object.entries(parts);
  const text = [`${count(first![1])} ${first![0]}`, ...rest.map(([k, v]) => `${count(v)} ${k}`)].join(' · ');
  process.stderr.write(`migrate: ${text}\n`);
}

function reasonLines(reasons: readonly ReasonCount[]): string[] {
  if (!reasons.length) return [];
  return [
    '',
    ...table([
      ['COUNT', 'REASON', 'SAMPLES'],
      ...reasons.map((r) => [count(r.count), r.reason, r.samples.join(', ')]),
    ]),
  ];
}

function reportLines(m: Migration, report: DryRunReport | MigrateAllReport, dry: boolean): string[] {
  const from = `${m.from.definition.name} v${m.from.definition.version}`;
  const head = `${dry ? 'dry run' : 'migrated'} ${from} → v${m.to.definition.version}: ${count(report.total)} read in ${report.ms} ms`;
  const rows = Object.entries(report.outcomes).map(([k, v]) => [k, count(v)]);
  const largest =
    'largest' in report && report.largest
      ? [`largest snapshot after: ${report.largest.id} (${count(report.largest.bytes)} bytes)`]
      : [];
  const attributes =
    'attributesChanged' in report && report.attributesChanged
      ? [`search attributes change on ${count(report.attributesChanged)} of them (the store re-indexes them)`]
      : [];
  return [
    head,
    '',
    ...table([['OUTCOME', 'INSTANCES'], ...rows]),
    ...attributes,
    ...largest,
    ...reasonLines(report.reasons),
  ];
}

/** One instance: planned in memory (dry run) or moved; a refusal of a real move throws MIGRATION_REFUSED. */
async function one(
  out: Output,
  store: Store,
  m: Migration,
  id: string,
  o: MigrateOptions,
  defs: WorkflowDefinition[],
) {
  if (o.dryRun) {
    const s = await store.load(id);
    if (!s) throw new NotFoundError(id);
    const plan = planMigration(m, s, { at: Date.now(), kinds: CLI_KINDS });
    const data = plan.ok
      ? { id, migratable: true, version: plan.snapshot.workflow.version }
      : { id, migratable: false, reasons: plan.reasons };
    if (!plan.ok && o.failOnRefused) process.exitCode = EXIT.refused;
    out.result(data, () =>
      plan.ok
        ? [`${id}: would move to v${m.to.definition.version}`]
        : [`${id}: would be refused`, ...plan.reasons.map((r) => `  - ${r}`)],
    );
    return;
  }
  const runner = createRunner({ store, workflows: defs, execute: false, kinds: CLI_KINDS });
  const moved: Snapshot = await migrate(runner, m, id);
  out.result({ id, migrated: true, version: moved.version, workflow: moved.workflow }, () => [
    `${id}: moved to ${moved.workflow.name} v${moved.workflow.version} (snapshot version ${moved.version})`,
  ]);
}

/** `stepfold migrate`: moves instances to a new definition version, or checks (`--dry-run`) what would move. */
export function register(program: Command): void {
  jsonOption(
    definitionsOption(
      storeOption(
        program
          .command('migrate')
          .description(
            'move instances to a new definition version with a migration module; --dry-run checks every instance in memory and writes nothing',
          )
          .requiredOption(
            '--migration <module[#export]>',
            'an ESM module (.js, .mjs) exporting a defineMigration result',
          )
          .option('--id <id>', 'one instance')
          .option('--all', "every instance of the migration's workflow")
          .option('--status <status>', 'with --all: only instances in this status', statusOf)
          .option('--dry-run', 'plan every migration in memory and report; write nothing')
          .option(
            '--fail-on-refused',
            'exit with the refused code (4) if any instance is (or would be) refused',
          )
          .option('--page-size <n>', 'instances read per store page', positiveInt, 500),
      ),
    ),
  ).action(async (options: MigrateOptions) => {
    if ((options.id === undefined) === (options.all !== true))
      throw new UsageError('migrate needs exactly one of --id <id> or --all');
    const out = createOutput(options.json === true);
    const m = await loadMigration(options.migration);
    // A dry run reads and plans only: the definitions are the migration's own.
    const defs =
      options.dryRun && !definitionPaths(options).length
        ? []
        : await loadDefinitions(requireDefinitions(options, 'migrate'));
    await withStore(storeUrlOf(options.store), async ({ store }) => {
      if (options.id !== undefined) return one(out, store, m, options.id, options, defs);
      const paging = { status: options.status, pageSize: options.pageSize };
      const report = options.dryRun
        ? await dryRunMigration(store, m, {
            kinds: CLI_KINDS,
            ...paging,
            onProgress: (p) => progress({ read: p.read, migratable: p.migratable, refused: p.refused }),
          })
        : await migrateAll(createRunner({ store, workflows: defs, execute: false, kinds: CLI_KINDS }), m, {
            ...paging,
            onProgress: (p) => progress({ read: p.read, migrated: p.migrated, refused: p.refused }),
          });
      if (options.failOnRefused && report.outcomes.refused > 0) process.exitCode = EXIT.refused;
      out.result(report, () => reportLines(m, report, options.dryRun === true));
    });
  });
}
