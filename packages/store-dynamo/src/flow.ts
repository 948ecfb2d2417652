import {
  BatchWriteItemCommand,
  DeleteItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import {
  documentFlow,
  type FlowCounterRef,
  type FlowDocument,
  type FlowDocumentCalls,
  type FlowDriver,
  flowRefId,
  type StoredFlowDocument,
  textDigest,
} from '@stepfold/engine';
import { Expr } from './expression.js';
import { conditional } from './map-error.js';
import { batchGet, type Item, queryItems, type Table } from './requests.js';
import { LIST_INDEX } from './setup.js';

/**
 * `id` prefix of a flow counter's item. '#' is in no instance id: no instance collides with it, and
 * stream readers pass over it as over the settings item.
 */
export const FLOW_KEY_PREFIX = '#flow#';

/** `id` prefix of a holder's item: the counters it holds or waits on, for release and renew. */
export const FLOW_HOLDER_PREFIX = '#flow-holder#';

/**
 * `listShard` of counter items: their own partition of the list index, where they sort by id, that
 * is by scope, key and period. Instances are in the partition `all`: a listing never meets them.
 */
export const FLOW_SHARD = 'flow';

// NUL is in no scope or key (the kit refuses it) and sorts below every other character.
const SEPARATOR = '\0';
// Of the sort key of list-index (at most 1,024 bytes): the part of an id that orders counters.
const ORDERED_BYTES = 900;

const encoder = new TextEncoder();

/** The longest start of `text` of at most `bytes` UTF-8 bytes (never half a character). */
function utf8Head(text: string, bytes: number): string {
  if (encoder.encode(text).length <= bytes) return text;
  let out = '';
  let used = 0;
  for (const ch of text) {
    const n = encoder.encode(ch).length;
    if (used + n > bytes) break;
    out += ch;
    used += n;
  }
  return out;
}

const ordered = (ref: FlowCounterRef) =>
  `${ref.scope}${SEPARATOR}${ref.key}${SEPARATOR}${String(ref.period).padStart(16, '0')}`;

/**
 * The item id of a counter: its scope, key and period (16 digits), cut to 900 bytes, so ids sort
 * as counters do, then a digest of the whole, so two counters whose first 900 bytes agree differ.
 */
export async function flowKeyId(ref: FlowCounterRef): Promise<string> {
  const text = ordered(ref);
  const digest = (await textDigest(text, 'SHA-256')).slice(0, 32);
  return `${FLOW_KEY_PREFIX}${utf8Head(text, ORDERED_BYTES)}${SEPARATOR}${digest}`;
}

const holderId = (holder: string) => `${FLOW_HOLDER_PREFIX}${holder}`;

const storedOf = (item: Item | undefined): StoredFlowDocument | undefined => {
  const json = item?.['doc']?.S;
  const v = item?.['v']?.N;
  return json === undefined || v === undefined
    ? undefined
    : { doc: JSON.parse(json) as FlowDocument, version: Number(v) };
};

// Delete requests per BatchWriteItem: DynamoDB's most.
const BATCH_WRITE_MAX = 25;

/**
 * The flow capability on DynamoDB, in the store's table: an item per counter holding its slots,
 * starts and waiters as JSON with a version every write is conditional on, and an item per holder
 * naming the counters it is on (a table keyed by id alone cannot be queried by holder).
 */
export function dynamoFlow(table: Table): FlowDriver {
  const { client, name } = table;
  const calls: FlowDocumentCalls = {
    async read(refs) {
      const found = await batchGet(table, await Promise.all(refs.map(flowKeyId)), ['doc', 'v']);
      const out = new Map<string, StoredFlowDocument>();
      for (const item of found.values()) {
        const s = storedOf(item);
        if (s) out.set(flowRefId(s.doc), s);
      }
      return out;
    },
    async write(ref, doc, version) {
      const id = await flowKeyId(ref);
      const x = new Expr();
      const condition =
        version === null ? `attribute_not_exists(${x.n('id')})` : `${x.n('v')} = ${x.num(version)}`;
      if (doc === null) {
        if (version === null) return true;
        const del = new DeleteItemCommand({
          TableName: name,
          Key: { id: { S: id } },
          ConditionExpression: condition,
          ...x.fields,
        });
        return (await conditional(client.send(del))) !== null;
      }
      const put = new PutItemCommand({
        TableName: name,
        Item: {
          id: { S: id },
          listShard: { S: FLOW_SHARD },
          v: { N: String((version ?? 0) + 1) },
          doc: { S: JSON.stringify(doc) },
        },
        ConditionExpression: condition,
        ...x.fields,
      });
      return (await conditional(client.send(put))) !== null;
    },
    async holding(holders) {
      const found = await batchGet(table, holders.map(holderId), ['keys']);
      const ids = [...found.values()].flatMap((item) => item['keys']?.SS ?? []);
      const items = await batchGet(table, ids, ['doc', 'v']);
      return [...items.values()].flatMap((item) => storedOf(item) ?? []);
    },
    async page({ scope, after, limit }) {
      // A scope's ids start with its own head; past them, the scope has no more counters.
      const head =
        scope === undefined
          ? FLOW_KEY_PREFIX
          : `${FLOW_KEY_PREFIX}${utf8Head(`${scope}${SEPARATOR}`, ORDERED_BYTES)}`;
      if (scope !== undefined && after && after.scope > scope) return { docs: [], last: null };
      const x = new Expr();
      const from =
        after && (scope === undefined || after.scope === scope)
          ? `${x.n('id')} > ${x.s(await flowKeyId(after))}`
          : `${x.n('id')} >= ${x.s(head)}`;
      const keys = await queryItems(
        client,
        {
          TableName: name,
          IndexName: LIST_INDEX,
          KeyConditionExpression: `${x.n('listShard')} = ${x.s(FLOW_SHARD)} AND ${from}`,
          ProjectionExpression: x.n('id'),
          ...x.fields,
        },
        limit,
      );
      const ids = keys.flatMap((k) => k['id']?.S ?? []);
      const inScope = ids.filter((id) => id.startsWith(head));
      // The index is eventually consistent: the items themselves are read consistently.
      const items = await batchGet(table, inScope, ['doc', 'v']);
      const docs = inScope
        .flatMap((id) => storedOf(items.get(id)) ?? [])
        .filter((d) => scope === undefined || d.doc.scope === scope);
      const more = ids.length === limit && inScope.length === ids.length;
      const end = more ? storedOf(items.get(ids[ids.length - 1]!)) : undefined;
      // The last id read, when its item went meanwhile: read on after the last one still there.
      const last = end?.doc ?? (more ? docs[docs.length - 1]?.doc : undefined);
      return { docs, last: last ? { scope: last.scope, key: last.key, period: last.period } : null };
    },
    async note(holder, refs) {
      const x = new Expr();
      await client.send(
        new UpdateItemCommand({
          TableName: name,
          Key: { id: { S: holderId(holder) } },
          UpdateExpression: `ADD ${x.n('keys')} ${x.v({ SS: [...new Set(await Promise.all(refs.map(flowKeyId)))] })}`,
          ...x.fields,
        }),
      );
    },
    async forget(holders) {
      for (let i = 0; i < holders.length; i += BATCH_WRITE_MAX) {
        let requests = holders
          .slice(i, i + BATCH_WRITE_MAX)
          .map((h) => ({ DeleteRequest: { Key: { id: { S: holderId(h) } } } }));
        for (let round = 0; requests.length; round++) {
          if (round > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** round)));
          const out = await client.send(new BatchWriteItemCommand({ RequestItems: { [name]: requests } }));
          requests = (out.UnprocessedItems?.[name] ?? []) as typeof requests;
        }
      }
    },
  };
  return documentFlow(calls, { name: 'dynamodb' });
}
