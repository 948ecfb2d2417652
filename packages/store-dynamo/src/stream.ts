import { BatchWriteItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { documentStream, type StreamBatch, type StreamDriver } from '@stepfold/engine';
import { Expr } from './expression.js';
import { conditional } from './map-error.js';
import { batchGet, getItem, type Item, queryItems, type Table } from './requests.js';
import { LIST_INDEX } from './setup.js';

// The stream capability on DynamoDB: the engine's log of batches (see `documentStream`), one item
// per append in the instances' table, its id the instance and the batch's first offset, put on the
// condition that no item has that id. Each instance's batches are a partition of the list index of
// their own (`listShard` = the id prefix), where they sort by offset: a read is a Query there, then
// consistent reads of the items. The index may lag: the engine reads up to the first batch it
// misses, and an append that read a stale last batch loses its put and reads on by id.

/** `id` prefix of stream items; '#' is in no instance id, and wake stream readers pass such items over. */
export const STREAM_KEY_PREFIX = '#stream#';

const BATCH_WRITE_MAX = 25;
const ATTRS = ['f', 'n', 's', 'a', 'r', 'c', 'x'];

/** The list-index partition of an instance's stream. */
const shardOf = (instance: string) => `${STREAM_KEY_PREFIX}${instance}#`;
// 16 digits keep every safe offset in order as text.
const idOf = (instance: string, first: number) => `${shardOf(instance)}${String(first).padStart(16, '0')}`;

function batchOf(item: Item | undefined): StreamBatch | null {
  if (!item?.['f']?.N) return null;
  return {
    first: Number(item['f'].N),
    next: Number(item['n']!.N),
    step: item['s']!.S!,
    attempt: Number(item['a']!.N),
    reset: item['r']!.BOOL === true,
    chunks: (item['c']!.L ?? []).map((c) => c.S!),
    fences: JSON.parse(item['x']!.S!) as Record<string, number>,
  };
}

/** The stream calls on `table`. */
export function dynamoStream(table: Table): StreamDriver {
  const { client, name } = table;
  /** Ids of the instance's batches from the list index: from `from` on (ascending), or before it (descending). */
  const ids = async (instance: string, bound: { from?: number; before?: number }, want: number) => {
    const x = new Expr();
    const id = x.n('id');
    const range =
      bound.before !== undefined
        ? ` AND ${id} < ${x.s(idOf(instance, bound.before))}`
        : bound.from !== undefined
          ? ` AND ${id} >= ${x.s(idOf(instance, bound.from))}`
          : '';
    const keys = await queryItems(
      client,
      {
        TableName: name,
        IndexName: LIST_INDEX,
        KeyConditionExpression: `${x.n('listShard')} = ${x.s(shardOf(instance))}${range}`,
        ProjectionExpression: id,
        ScanIndexForward: bound.before === undefined && bound.from !== undefined,
        ...x.fields,
      },
      want,
    );
    return keys.flatMap((k) => k['id']?.S ?? []);
  };
  const read = async (list: string[]): Promise<StreamBatch[]> => {
    const items = await batchGet(table, list, ATTRS);
    return list.flatMap((id) => batchOf(items.get(id)) ?? []);
  };
  return documentStream(
    {
      get: async (instance, first) => batchOf(await getItem(table, idOf(instance, first))),
      async last(instance) {
        const [id] = await ids(instance, {}, 1);
        return id === undefined ? null : batchOf(await getItem(table, id));
      },
      async insert(instance, b) {
        const x = new Expr();
        const put = client.send(
          new PutItemCommand({
            TableName: name,
            Item: {
              id: { S: idOf(instance, b.first) },
              listShard: { S: shardOf(instance) },
              f: { N: String(b.first) },
              n: { N: String(b.next) },
              s: { S: b.step },
              a: { N: String(b.attempt) },
              r: { BOOL: b.reset },
              c: { L: b.chunks.map((c) => ({ S: c })) },
              x: { S: JSON.stringify(b.fences) },
            },
            ConditionExpression: `attribute_not_exists(${x.n('id')})`,
            ...x.fields,
          }),
        );
        return (await conditional(put)) !== null;
      },
      async after(instance, from, limit) {
        const found = await ids(instance, { from }, limit);
        // The batch holding `from` starts before it, unless `from` is where a batch starts.
        if (from > 0 && found[0] !== idOf(instance, from))
          found.unshift(...(await ids(instance, { before: from }, 1)));
        return read(found);
      },
      async remove(instance) {
        for (;;) {
          const list = await ids(instance, {}, 500);
          if (!list.length) return;
          for (let i = 0; i < list.length; i += BATCH_WRITE_MAX) {
            let requests = list
              .slice(i, i + BATCH_WRITE_MAX)
              .map((id) => ({ DeleteRequest: { Key: { id: { S: id } } } }));
            for (let round = 0; requests.length; round++) {
              if (round > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** round)));
              const out = await client.send(
                new BatchWriteItemCommand({ RequestItems: { [name]: requests } }),
              );
              requests = (out.UnprocessedItems?.[name] ?? []) as typeof requests;
            }
          }
          if (list.length < 500) return;
        }
      },
    },
    { name: 'dynamodb' },
  );
}
