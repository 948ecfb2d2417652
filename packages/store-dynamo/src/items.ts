import { DeleteItemCommand, PutItemCommand, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { DriverOutcome, EncodedSnapshot, UpdateCondition } from '@stepfold/engine';
import { SnapshotTooLargeError, snapshotBytes } from '@stepfold/engine';
import {
  CLAIM_ATTRIBUTES,
  DYNAMO_ITEM_LIMIT,
  itemBytes,
  jsonOf,
  SEARCH_ATTRIBUTE,
  searchText,
  toItem,
  WAKE_ATTRIBUTES,
} from './encode.js';
import { Expr } from './expression.js';
import { consumeClauses, MAX_WAITING } from './inbox.js';
import { conditional, isItemTooLarge } from './map-error.js';
import { getItem, type Item, type Table, type Update, updateInput, updateItem } from './requests.js';
import { indexWrites, itemValues, transact } from './search-writes.js';
import { NOTE_ATTRIBUTE, noteOf } from './stream-notice.js';

// Rounds of a delete that a save racing it keeps moving the search values under.
const REMOVE_TRIES = 10;

/** The item calls of the driver: one instance per item, keyed by `id`. */
export function items(table: Table) {
  return {
    /**
     * `PutItem … attribute_not_exists(id)`; with search values, in one transaction with an index
     * item per value.
     */
    async insert(row: EncodedSnapshot): Promise<boolean> {
      const item = toItem(row, table.shards);
      const note = noteOf(row);
      if (note) item[NOTE_ATTRIBUTE] = { S: note };
      const put = {
        TableName: table.name,
        Item: item,
        ConditionExpression: 'attribute_not_exists(#id)',
        ExpressionAttributeNames: { '#id': 'id' },
      };
      if (row.search === null)
        return (await conditional(table.client.send(new PutItemCommand(put)))) !== null;
      return transact(table, [{ Put: put }, ...indexWrites(table, row.id, {}, row.search)]);
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
     * the signals it consumed (the oldest waiting) and, with `match`, to compare them. It also
     * requires the stored search values to be the new ones: a save that changes them is refused,
     * and DynamoDB hands back the item as it was, whose values say which index items to move in
     * the transaction that writes it then.
     */
    async update(row: EncodedSnapshot, c: UpdateCondition): Promise<DriverOutcome> {
      const item = toItem(row, table.shards);
      const text = searchText(row.search);
      try {
        let seen: Item | undefined;
        const first = saveRequest(row, item, c, text);
        if (first === null) return 'failed';
        const onRefused = (found: Item | undefined) => {
          seen = found;
        };
        if (await updateItem(table, row.id, first.x, { ...first.update, onRefused })) return 'written';
        // Without the item (none, or none returned) the engine reads the version to learn why.
        const old = seen as Item | undefined;
        const stored = Number(old?.['version']?.N);
        if (old === undefined || !Number.isSafeInteger(stored)) return 'failed';
        if (stored !== c.expected) return { stored };
        const before = old[SEARCH_ATTRIBUTE]?.S ?? null;
        // Refused with the values unchanged: the inbox or `match` part of the condition failed.
        if (before === text) return 'failed';
        const second = saveRequest(row, item, c, before)!;
        const writes: TransactWriteItem[] = [
          { Update: updateInput(table, row.id, second.x, second.update) },
          ...indexWrites(table, row.id, itemValues(old), row.search ?? {}),
        ];
        return (await transact(table, writes)) ? 'written' : 'failed';
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

    /**
     * `DeleteItem … attribute_exists(id)` (and the version, if given): the inbox goes with the
     * item. An instance with search values is refused by the condition that it has none; DynamoDB
     * hands back its values, and a transaction deletes it with its index items, on the condition
     * that the values are still those.
     */
    async remove(id: string, version?: number): Promise<boolean> {
      for (let round = 0; round < REMOVE_TRIES; round++) {
        let seen: Item | undefined;
        const x = new Expr();
        const condition = [`attribute_exists(${x.n('id')})`];
        if (version !== undefined) condition.push(`${x.n('version')} = ${x.num(version)}`);
        const plain = `${condition.join(' AND ')} AND attribute_not_exists(${x.n(SEARCH_ATTRIBUTE)})`;
        const del = new DeleteItemCommand({
          TableName: table.name,
          Key: { id: { S: id } },
          ConditionExpression: plain,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          ...x.fields,
        });
        const sent = table.client.send(del).catch((e: unknown) => {
          seen = (e as { Item?: Item }).Item;
          throw e;
        });
        if ((await conditional(sent)) !== null) return true;
        const old = seen as Item | undefined;
        const text = old?.[SEARCH_ATTRIBUTE]?.S;
        if (text === undefined || (version !== undefined && old?.['version']?.N !== String(version)))
          return false;
        const y = new Expr();
        const kept = [`attribute_exists(${y.n('id')})`, `${y.n(SEARCH_ATTRIBUTE)} = ${y.s(text)}`];
        if (version !== undefined) kept.push(`${y.n('version')} = ${y.num(version)}`);
        const writes: TransactWriteItem[] = [
          {
            Delete: {
              TableName: table.name,
              Key: { id: { S: id } },
              ConditionExpression: kept.join(' AND '),
              ...y.fields,
            },
          },
          ...indexWrites(table, id, itemValues(old), {}),
        ];
        if (await transact(table, writes)) return true;
        // A save changed the values in between: read them again.
      }
      return false;
    },
  };
}

/**
 * The UpdateItem of a save (see `update`), requiring the stored search values to be `stored`
 * (null: none); null when `c` cannot hold on any item.
 */
function saveRequest(
  row: EncodedSnapshot,
  item: Item,
  c: UpdateCondition,
  stored: string | null,
): { x: Expr; update: Update } | null {
  const x = new Expr();
  const set = Object.entries(item)
    .filter(([name]) => name !== 'id')
    .map(([name, value]) => `${x.n(name)} = ${x.v(value)}`);
  const gone = [...WAKE_ATTRIBUTES, SEARCH_ATTRIBUTE].filter((a) => !(a in item));
  const remove = [...gone, ...CLAIM_ATTRIBUTES].map((a) => x.n(a));
  const search = x.n(SEARCH_ATTRIBUTE);
  const condition = [
    `${x.n('version')} = ${x.num(c.expected)}`,
    stored === null ? `attribute_not_exists(${search})` : `${search} = ${x.s(stored)}`,
  ];
  const consumed = c.consumed ?? [];
  if (consumed.length) {
    const first = consumed[0]!;
    // Seqs are the list's positions: what a claim returned is a run from its head. Anything
    // else cannot be what is stored.
    if (consumed.length > MAX_WAITING || consumed.some((s, i) => s !== first + i)) return null;
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
  return { x, update: { set, remove, condition: condition.join(' AND '), note: noteOf(row) } };
}
