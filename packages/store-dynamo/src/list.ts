import type { ListArgs } from '@stepfold/engine';
import { jsonOf, LIST_SHARD, SEARCH_ATTRIBUTE } from './encode.js';
import { Expr } from './expression.js';
import { batchGet, type Item, queryItems, type Table } from './requests.js';
import { LIST_INDEX, STATUS_INDEX, WORKFLOW_INDEX } from './setup.js';

/** A listed instance: its id and snapshot JSON. */
export interface ListedRow {
  id: string;
  json: string;
}

/** The attributes a listing reads of each instance it may return. */
export const LISTED_ATTRIBUTES = ['snapshot', 'status', 'workflow', SEARCH_ATTRIBUTE];

/**
 * Up to `limit + 1` instances in id order (descending with `desc`) after the cursor, that `keep`
 * (when given) keeps: ids from the index whose partition is the filter (a status and workflow
 * filter reads the status partition and filters on the projected workflow), then a consistent
 * batch read of those items. Indexes are eventually consistent on AWS: each item is checked
 * against the filter again, and more ids are read for those that fail.
 */
export async function plainPage(
  table: Table,
  args: Pick<ListArgs, 'status' | 'workflow' | 'cursor' | 'limit'>,
  desc: boolean,
  keep?: (item: Item) => boolean,
): Promise<ListedRow[]> {
  const { status, workflow } = args;
  const want = args.limit + 1;
  const rows: ListedRow[] = [];
  for (let cursor = args.cursor; rows.length < want; ) {
    const x = new Expr();
    const [index, attr, value] = status
      ? [STATUS_INDEX, 'status', status]
      : workflow
        ? [WORKFLOW_INDEX, 'workflow', workflow]
        : [LIST_INDEX, 'listShard', LIST_SHARD];
    const partition = `${x.n(attr)} = ${x.s(value)}`;
    const filter = status && workflow ? `${x.n('workflow')} = ${x.s(workflow)}` : undefined;
    const after = cursor ? ` AND ${x.n('id')} ${desc ? '<' : '>'} ${x.s(cursor)}` : '';
    const asked = want - rows.length;
    const keys = await queryItems(
      table.client,
      {
        TableName: table.name,
        IndexName: index,
        KeyConditionExpression: partition + after,
        FilterExpression: filter,
        ProjectionExpression: x.n('id'),
        ScanIndexForward: !desc,
        ...x.fields,
      },
      asked,
    );
    const ids = keys.flatMap((k) => k['id']?.S ?? []);
    const found = await batchGet(table, ids, keep ? LISTED_ATTRIBUTES : ['snapshot', 'status', 'workflow']);
    for (const id of ids) {
      const item = found.get(id);
      if (!item || (status && item['status']?.S !== status) || (workflow && item['workflow']?.S !== workflow))
        continue;
      if (keep && !keep(item)) continue;
      rows.push({ id, json: jsonOf(item) });
    }
    if (ids.length < asked) break; // the index has no more
    cursor = ids[ids.length - 1]!;
  }
  return rows;
}
