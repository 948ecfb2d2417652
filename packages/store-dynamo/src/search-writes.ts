import { type TransactWriteItem, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { SEARCH_ATTRIBUTE, type SearchValues } from './encode.js';
import { cancelReasons } from './map-error.js';
import type { Item, Table } from './requests.js';
import { searchItemId, searchKey } from './search-key.js';

// The write side of the search index: an instance item keeps its values as `search` (one JSON
// text, names sorted) so that a save can tell in its own condition whether they changed, and a
// change moves the index items in one transaction with the instance.

/** The values a `search` text holds (none for no text, or one that is not an object). */
export function searchValuesOf(text: string | undefined): SearchValues {
  if (text === undefined) return {};
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as SearchValues) : {};
  } catch {
    return {};
  }
}

/** The values an item read back holds in its `search` attribute. */
export function itemValues(item: Item | undefined): SearchValues {
  return searchValuesOf(item?.[SEARCH_ATTRIBUTE]?.S);
}

/**
 * The writes that take an instance's index from `before` to `after`: a Put for each value that is
 * new or changed (kind included: '1' is not 1), a Delete for each name gone. Unconditional: the
 * instance's own write in the same transaction carries the condition.
 */
export function indexWrites(
  table: Table,
  instance: string,
  before: SearchValues,
  after: SearchValues,
): TransactWriteItem[] {
  const out: TransactWriteItem[] = [];
  for (const name of Object.keys(after)) {
    const v = after[name]!;
    if (Object.hasOwn(before, name) && before[name] === v) continue;
    out.push({
      Put: {
        TableName: table.name,
        Item: {
          id: { S: searchItemId(instance, name) },
          searchName: { S: name },
          searchKey: { S: searchKey(v, instance) },
        },
      },
    });
  }
  for (const name of Object.keys(before))
    if (!Object.hasOwn(after, name))
      out.push({ Delete: { TableName: table.name, Key: { id: { S: searchItemId(instance, name) } } } });
  return out;
}

// Tries of a transaction that DynamoDB cancels for a conflicting write in flight on one of its items.
const CONFLICT_TRIES = 5;

/**
 * Sends one TransactWriteItems: true when written, false when DynamoDB cancelled it for a
 * condition (the caller tells which by reading). A cancel for a conflicting write in flight is
 * tried again after a pause; anything else throws.
 */
export async function transact(table: Table, writes: TransactWriteItem[]): Promise<boolean> {
  for (let round = 1; ; round++) {
    try {
      await table.client.send(new TransactWriteItemsCommand({ TransactItems: writes }));
      return true;
    } catch (e) {
      const codes = cancelReasons(e).map((r) => r.Code);
      if (codes.includes('ConditionalCheckFailed')) return false;
      if (!codes.includes('TransactionConflict') || round === CONFLICT_TRIES) throw e;
      await new Promise((r) => setTimeout(r, 10 * 2 ** round));
    }
  }
}
