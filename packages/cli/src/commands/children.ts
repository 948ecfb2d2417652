import { NotFoundError, type Status } from '@stepfold/engine';
import { type Command, InvalidArgumentError } from 'commander';
import { type ChildPage, listChildren } from '../child-listing.js';
import { definitionFor, loadDefinitions } from '../definitions.js';
import { UsageError } from '../exit-codes.js';
import { findChildRefs } from '../family.js';
import {
  definitionPaths,
  definitionsOption,
  jsonOption,
  positiveInt,
  type StoreOptions,
  storeOption,
} from '../options.js';
import { createOutput, isoTime, table } from '../output.js';
import { storeUrlOf, withStore } from '../store-url.js';

const STATUSES = [
  'running',
  'waiting',
  'compensating',
  'completed',
  'failed',
  'cancelled',
  'aborted',
  'dlq',
  'missing',
] as const;

/** Loads in flight at most; a store round trip each. */
const MAX_BATCH = 500;

interface ChildrenOptions extends StoreOptions {
  definitions?: string[] | undefined;
  step?: string | undefined;
  status?: Status | 'missing' | undefined;
  limit: number;
  cursor?: string | undefined;
  batch: number;
}

function statusOf(value: string): Status | 'missing' {
  if (!(STATUSES as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`expected one of ${STATUSES.join(', ')}`);
  }
  return value as Status | 'missing';
}

function batchOf(value: string): number {
  const n = positiveInt(value);
  if (n > MAX_BATCH) throw new InvalidArgumentError(`at most ${MAX_BATCH}`);
  return n;
}

/** A page of children as a table, with the next page's flag. */
function render(page: ChildPage): string[] {
  const rows = page.items.map((r) => [
    r.id,
    r.step,
    r.item === undefined ? '-' : String(r.item),
    r.workflow === undefined ? '-' : `${r.workflow}@${r.workflowVersion}`,
    r.status,
    r.version === undefined ? '-' : String(r.version),
    isoTime(r.updatedAt),
    r.error ?? '',
  ]);
  return [
    ...(rows.length
      ? table([['CHILD', 'STEP', 'ITEM', 'WORKFLOW', 'STATUS', 'VERSION', 'UPDATED', 'ERROR'], ...rows])
      : ['no children']),
    `${page.scanned} read of ${page.total} children of ${page.parent}`,
    ...(page.cursor ? [`next page: --cursor ${page.cursor}`] : []),
  ];
}

/** `stepfold children <id>`: the child instances a parent started, with their statuses, paged. */
export function register(program: Command): void {
  jsonOption(
    definitionsOption(
      storeOption(
        program
          .command('children')
          .description(
            "list the child instances an instance started (its child steps' and its maps' items), with their statuses, paged",
          )
          .argument('<id>', 'the parent instance id')
          .option('--step <step>', "only this step's children")
          .option('--status <status>', `only children in this status (${STATUSES.join(', ')})`, statusOf)
          .option('--limit <n>', 'page size', positiveInt, 50)
          .option('--cursor <cursor>', 'the cursor a previous page printed')
          .option('--batch <n>', `children loaded at once (at most ${MAX_BATCH})`, batchOf, 25),
      ),
      false,
    ),
  ).action(async (id: string, options: ChildrenOptions) => {
    const out = createOutput(options.json === true);
    const paths = definitionPaths(options);
    const defs = paths.length ? await loadDefinitions(paths) : [];
    await withStore(storeUrlOf(options.store), async ({ store }) => {
      const s = await store.load(id);
      if (!s) throw new NotFoundError(id);
      const refs = await findChildRefs(store, s, definitionFor(defs, s.workflow));
      if (options.step !== undefined && !refs.some((r) => r.step === options.step)) {
        throw new UsageError(`step ${options.step} of ${id} has started no children`);
      }
      // Progress on stderr, so stdout stays the table (or the JSON document).
      const progress = (scanned: number, left: number) => {
        if (!out.json && left > 0) process.stderr.write(`read ${scanned} children, ${left} left…\n`);
      };
      const page = await listChildren(store, s, refs, options, progress);
      out.result(page, () => render(page));
    });
  });
}
