import type { ListOrder, Snapshot, Status, Store, WhereCondition } from '@stepfold/engine';
import { type Command, InvalidArgumentError } from 'commander';
import { jsonOption, positiveInt, type StoreOptions, storeOption } from '../options.js';
import { createOutput } from '../output.js';
import { instanceRow, renderRows } from '../snapshot-view.js';
import { storeUrlOf, withStore } from '../store-url.js';
import { orderOf, whereOf } from '../where-option.js';

const STATUSES: readonly Status[] = [
  'running',
  'waiting',
  'compensating',
  'completed',
  'failed',
  'cancelled',
  'aborted',
  'dlq',
];

interface ListOptions extends StoreOptions {
  where?: Record<string, WhereCondition> | undefined;
  orderBy?: ListOrder | undefined;
  status?: Status | undefined;
  workflow?: string | undefined;
  prefix?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** One page of instances, and the cursor of the next (null on the last). */
export interface ListResult {
  items: Snapshot[];
  cursor: string | null;
}

/**
 * Lists instances through `store.list`. An id prefix is filtered here, over as many store pages as
 * it takes to fill `limit`: each store page asks only for what is still missing, so its cursor is
 * always a place to resume and nothing fetched is dropped. Store pages are in id order, so the scan
 * stops at the first id past the prefix.
 */
export async function listInstances(
  store: Store,
  query: {
    status?: Status | undefined;
    workflow?: string | undefined;
    prefix?: string | undefined;
    limit: number;
    cursor?: string | null | undefined;
    where?: Record<string, WhereCondition> | undefined;
    orderBy?: ListOrder | undefined;
  },
): Promise<ListResult> {
  const { prefix, limit } = query;
  const items: Snapshot[] = [];
  let cursor = query.cursor ?? null;
  do {
    const page = await store.list({
      limit: limit - items.length,
      cursor,
      ...(query.status ? { status: query.status } : {}),
      ...(query.workflow ? { workflow: query.workflow } : {}),
      ...(query.where ? { where: query.where } : {}),
      ...(query.orderBy ? { orderBy: query.orderBy } : {}),
    });
    cursor = page.cursor;
    const byId =
      query.orderBy === undefined ||
      (typeof query.orderBy === 'object' && query.orderBy.field === 'id' && !query.orderBy.desc);
    for (const s of page.items) {
      if (!prefix || s.id.startsWith(prefix)) items.push(s);
      else if (byId && s.id > prefix) return { items, cursor: null }; // past every id with the prefix
    }
  } while (prefix && cursor !== null && items.length < limit);
  return { items, cursor };
}

/** Parses `--status`: one of the engine's statuses. */
export function statusOf(value: string): Status {
  if (!(STATUSES as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`expected one of ${STATUSES.join(', ')}`);
  }
  return value as Status;
}

/** `stepfold list`: instances of a store, filtered and paged. */
export function register(program: Command): void {
  jsonOption(
    storeOption(
      program
        .command('list')
        .description('list instances in a store, in id order (or --order-by a search attribute)')
        .option(
          '--where <condition>',
          'a condition on a search attribute or status/workflow: name=value, name>=value, name<value…; repeatable, all must hold',
          whereOf,
        )
        .option('--order-by <field>', 'a search attribute (or id) to order by; -name for descending', orderOf)
        .option('--status <status>', `only this status (${STATUSES.join(', ')})`, statusOf)
        .option('--workflow <name>', 'only this workflow')
        .option('--prefix <id prefix>', 'only ids starting with this (filtered by the CLI over store pages)')
        .option('--limit <n>', 'page size', positiveInt, 50)
        .option('--cursor <cursor>', 'the cursor a previous page printed'),
    ),
  ).action(async (options: ListOptions) => {
    const out = createOutput(options.json === true);
    await withStore(storeUrlOf(options.store), async ({ store }) => {
      const page = await listInstances(store, options);
      const now = Date.now();
      const rows = page.items.map((s) => instanceRow(s, now));
      out.result({ items: rows, cursor: page.cursor }, () => [
        ...(rows.length ? renderRows(rows) : ['no instances']),
        ...(page.cursor ? [`next page: --cursor ${page.cursor}`] : []),
      ]);
    });
  });
}
