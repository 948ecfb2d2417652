import { DeleteItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { DriverOutcome, EncodedSnapshot, UpdateCondition } from '@stepfold/engine';
import { SnapshotTooLargeError, snapshotBytes } from '@stepfold/engine';
import { CLAIM_ATTRIBUTES, DYNAMO_ITEM_LIMIT, itemBytes, jsonOf, toItem, WAKE_ATTRIBUTES } from './encode.js';
import { Expr } from './expression.js';
import { consumeClauses, MAX_WAITING } from './inbox.js';
import { conditional, isItemTooLarge } from './map-error.js';
import { getItem, type Table, updateItem } from './requests.js';
import { NOTE_ATTRIBUTE, noteOf } from './stream-notice.js';

/** The item calls of the driver: one instance per item, keyed by `id`. */
export function items(table: Table) {
  return {
    /** `PutItem … attribute_not_exists(id)`. */
    async insert(row: EncodedSnapshot): Promise<boolean> {
      const item = toItem(row, table.shards);
      const note = noteOf(row);
      if (note) item[NOTE_ATTRIBUTE] = { S: note };
      const put = new PutItemCommand({
        TableName: table.name,
        Item: item,
        ConditionExpression: 'attribute_not_exists(#id)',
        ExpressionAttributeNames: { '#id': 'id' },
      });
      return (await conditional(table.client.send(put))) !== null;
    },

    async select(id: string): Promise<string | null> {
      const item = await getItem(table, id, ['snapshot']);
      return item ? jsonOf(item) : null;
    },

    async version(id: string): Promise<number | null> {
      const v = (await getItem(table, id, ['version']))?.['version']?.N;
      return v === undefined ? null : Number(v);
    },

    /**
     * One UpdateItem conditional on the version: it sets the attributes a save owns, removes the
     * wake attributes it has no more and any claim, and never touches the inbox but to take off
     * the signals it consumed (the oldest waiting) and, with `match`, to compare them.
     */
    async update(row: EncodedSnapshot, c: UpdateCondition): Promise<DriverOutcome> {
      const item = toItem(row, table.shards);
      const x = new Expr();
      const set = Object.entries(item)
        .filter(([name]) => name !== 'id')
        .map(([name, value]) => `${x.n(name)} = ${x.v(value)}`);
      const remove = [...WAKE_ATTRIBUTES.filter((a) => !(a in item)), ...CLAIM_ATTRIBUTES].map((a) => x.n(a));
      const condition = [`${x.n('version')} = ${x.num(c.expected)}`];
      const consumed = c.consumed ?? [];
      if (consumed.length) {
        const first = consumed[0]!;
        // Seqs are the list's positions: what a claim returned is a run from its head. Anything
        // else cannot be what is stored.
        if (consumed.length > MAX_WAITING || consumed.some((s, i) => s !== first + i)) return 'failed';
        const k = consumeClauses(x, first, consumed.length);
        set.push(...k.set);
        remove.push(...k.remove);
        condition.push(k.condition);
      }
      if (c.match) {
        // No digest: the texts themselves, the snapshot's and each consumed signal's.
        condition.push(`${x.n('snapshot')} = ${x.s(c.match.json)}`);
        c.match.sent.forEach((e, i) => condition.push(`${x.n('sent')}[${i}].${x.n('e')} = ${x.s(e)}`));
      }
      try {
        const update = { set, remove, condition: condition.join(' AND '), note: noteOf(row) };
        return (await updateItem(table, row.id, x, update)) ? 'written' : 'failed';
      } catch (e) {
        if (!isItemTooLarge(e)) throw e;
        // The signals waiting in the item left no room for this snapshot.
        const waiting = (await getItem(table, row.id, ['sent']))?.['sent']?.L ?? [];
        const bytes = waiting.reduce(
          (n, el) => n + snapshotBytes(el.M?.['e']?.S ?? '') + 24,
          itemBytes(item),
        );
        throw new SnapshotTooLargeError(row.id, bytes, DYNAMO_ITEM_LIMIT);
      }
    },

    /** `DeleteItem … attribute_exists(id)` (and the version, if given): the inbox goes with the item. */
    async remove(id: string, version?: number): Promise<boolean> {
      const x = new Expr();
      const condition = [`attribute_exists(${x.n('id')})`];
      if (version !== undefined) condition.push(`${x.n('version')} = ${x.num(version)}`);
      const del = new DeleteItemCommand({
        TableName: table.name,
        Key: { id: { S: id } },
        ConditionExpression: condition.join(' AND '),
        ...x.fields,
      });
      return (await conditional(table.client.send(del))) !== null;
    },
  };
}
