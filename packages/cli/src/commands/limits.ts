import type { FlowKeyPage, FlowKeyState, Store } from '@stepfold/engine';
import type { Command } from 'commander';
import { UsageError } from '../exit-codes.js';
import { jsonOption, positiveInt, type StoreOptions, storeOption } from '../options.js';
import { createOutput, isoTime, table } from '../output.js';
import { storeUrlOf, withStore } from '../store-url.js';

interface LimitsOptions extends StoreOptions {
  scope?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** One counter as `limits --json` prints it: the store's listing, with what kind of limit it is. */
export interface LimitRow {
  scope: string;
  key: string;
  kind: 'concurrency' | 'rate';
  limit: number;
  periodMs?: number;
  holders: FlowKeyState['holders'];
  waiting: FlowKeyState['waiting'];
}

/**
 * One page of the store's flow counters (`store.flow.list`) at `now`; a store without the flow
 * capability is a usage error that says so.
 */
export async function listLimits(
  store: Store,
  query: { scope?: string | undefined; limit: number; cursor?: string | null | undefined; now: number },
  kind = 'this store',
): Promise<FlowKeyPage> {
  if (!store.flow)
    throw new UsageError(
      `${kind} has no flow counters (store.flow): concurrency and rate limits need a store with the flow capability`,
    );
  return store.flow.list({
    limit: query.limit,
    cursor: query.cursor ?? null,
    now: query.now,
    ...(query.scope === undefined ? {} : { scope: query.scope }),
  });
}

/** A listed counter as a row of `limits --json`. */
export function limitRow(c: FlowKeyState): LimitRow {
  return {
    scope: c.scope,
    key: c.key,
    kind: c.periodMs === undefined ? 'concurrency' : 'rate',
    limit: c.limit,
    ...(c.periodMs === undefined ? {} : { periodMs: c.periodMs }),
    holders: c.holders,
    waiting: c.waiting,
  };
}

/** The human table: a line per counter, its holders out of its limit and how many wait since when. */
function renderLimits(rows: readonly LimitRow[]): string[] {
  return table([
    ['SCOPE', 'KEY', 'LIMIT', 'HELD', 'WAITING', 'OLDEST WAITING SINCE'],
    ...rows.map((r) => [
      r.scope,
      r.key === '' ? '-' : r.key,
      r.kind === 'rate' ? `${r.limit} per ${r.periodMs} ms` : `${r.limit} at once`,
      String(r.holders.length),
      String(r.waiting.length),
      isoTime(r.waiting[0]?.since),
    ]),
  ]);
}

/** `stepfold limits`: the store's flow counters with holders or waiters, paged. */
export function register(program: Command): void {
  jsonOption(
    storeOption(
      program
        .command('limits')
        .description('list concurrency and rate limit keys with their holders and waiting counts')
        .option('--scope <scope>', 'only this scope (a workflow and step, or the scope a limit names)')
        .option('--limit <n>', 'page size', positiveInt, 50)
        .option('--cursor <cursor>', 'the cursor a previous page printed'),
    ),
  ).action(async (options: LimitsOptions) => {
    const out = createOutput(options.json === true);
    await withStore(storeUrlOf(options.store), async ({ store, kind }) => {
      const page = await listLimits(store, { ...options, now: Date.now() }, kind);
      const rows = page.items.map(limitRow);
      out.result({ items: rows, cursor: page.cursor }, () => [
        ...(rows.length ? renderLimits(rows) : ['no keys held or waited on']),
        ...(page.cursor ? [`next page: --cursor '${page.cursor.replaceAll("'", "'\\''")}'`] : []),
      ]);
    });
  });
}
