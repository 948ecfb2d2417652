import type { ListArgs } from '@stepfold/engine';
import { jsonOf, LIST_SHARD } from './encode.js';
import { Expr } from './expression.js';
import { batchGet, queryItems, type Table } from './requests.js';
import { LIST_INDEX, STATUS_INDEX, WORKFLOW_INDEX } from './setup.js';

/**
 * Up to `limit + 1` instances in id order after the cursor: ids from the index whose partition is
 * the filter (a status and workflow filter reads the status partition and filters on the projected
 * workflow), then a consistent batch read of those items. Indexes are eventually consistent on
 * AWS: each item is checked against the filter again, and more ids are read for those that fail.
 */
export async function page(table: Table, args: ListArgs): Promise<Array<{ id: string; json: string }>> {
  const { status, workflow } = args;
  const want = args.limit + 1;
  const rows: Array<{ id: string; json: string }> = [];
  for (let cursor = args.cursor; rows.length < want; ) {
    const x = new Expr();
    const [index, attr, value] = status
      ? [STATUS_INDEX, 'status', status]
      : workflow
        ? [WORKFLOW_INDEX, 'workflow', workflow]
        : [LIST_INDEX, 'listShard', LIST_SHARD];
    const partition = `${x.n(attr)} = ${x.s(value)}`;
    const filter = status && workflow ? `${x.n('workflow')} = ${x.s(workflow)}` : undefined;
    const after = cursor ? ` AND ${x.n('id')} > ${x.s(cursor)}` : '';
    const asked = want - rows.length;
    const keys = await queryItems(
      table.client,
      {
        TableName: table.name,
        IndexName: index,
        KeyConditionExpression: partition + after,
        FilterExpression: filter,
        ProjectionExpression: x.n('id'),
        ...x.fields,
      },
      asked,
    );
    const ids = keys.flatMap((k) => k['id']?.S ?? []);
    const found = await batchGet(table, ids, ['snapshot', 'status', 'workflow']);
    for (const id of ids) {
      const item = found.get(id);
      if (!item || (status && item['status']?.S !== status) || (workflow && item['workflow']?.S !== workflow))
        continue;
      rows.push({ id, json: jsonOf(item) });
    }
    if (ids.length < asked) break; // the index has no more
    cursor = ids[ids.length - 1]!;
  }
  return rows;
}
