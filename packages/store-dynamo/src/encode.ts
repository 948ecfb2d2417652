import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { EncodedSnapshot, SearchValue } from '@stepfold/engine';
import { SnapshotTooLargeError, snapshotBytes } from '@stepfold/engine';

/** DynamoDB's hard limit on one item: 400 KB, attribute names included. */
export const DYNAMO_ITEM_LIMIT = 400 * 1024;

/**
 * Default snapshot limit: the item limit less 2 KiB. Besides the snapshot string an item holds the id
 * (twice, at most 200 bytes each), the workflow name (three times: also in the lane key and the
 * definition), status, version, wake time, a claim's expiry and token, the stream note and the index keys: under
 * 1.4 KiB with their attribute names. Signals waiting in the inbox share the rest of the 400 KB
 * (see the README, "Inbox").
 */
export const DEFAULT_MAX_SNAPSHOT_BYTES = DYNAMO_ITEM_LIMIT - 2 * 1024;

/**
 * Default number of partitions the due index (and each workflow's lane, and the inbox) is spread
 * over: one, so a poll is one Query per index; raise it when the due index's writes near one
 * partition's ~1,000 a second (see the README, "Due shards").
 */
export const DEFAULT_DUE_SHARDS = 1;

/** Most due shards: a poll sends one Query per shard, so more would cost more than they spread. */
export const MAX_DUE_SHARDS = 64;

/** `dueShard` of instances written by 0.1 (one partition); `setup` moves them onto the shards. */
export const LEGACY_DUE_SHARD = 'due';

/** Value of `listShard` on every instance: the single partition of the id-ordered list index. */
export const LIST_SHARD = 'all';

/** The attributes an instance has only while it has a wake time (a save without one removes them). */
export const WAKE_ATTRIBUTES = ['wakeAt', 'dueShard', 'laneShard', 'dueKey'] as const;

/** The attributes of a claim on a due instance (every save removes them). */
export const CLAIM_ATTRIBUTES = ['claimedUntil', 'claimToken'] as const;

/** Checks a shard count option (`dueShards`, `readDueShards`): an integer in 1..{@link MAX_DUE_SHARDS}. */
export function dueShardsOf(value: number | undefined, option = 'dueShards'): number {
  const n = value ?? DEFAULT_DUE_SHARDS;
  if (!(Number.isInteger(n) && n >= 1 && n <= MAX_DUE_SHARDS)) {
    throw new RangeError(`${option} must be an integer in 1..${MAX_DUE_SHARDS}`);
  }
  return n;
}

/**
 * The shard of an id: FNV-1a (32 bit) of its UTF-16 units mod `shards`. Stable across processes and
 * versions: an item is found only on the shard its id hashes to.
 */
export function shardOf(id: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % shards;
}

/** Partition key on the due index: `due#<shard>`. */
export function dueShard(shard: number): string {
  return `due#${shard}`;
}

/** Partition key on the lane index: `<workflow>#<shard>` ('#' is in no valid workflow name). */
export function laneShard(workflow: string, shard: number): string {
  return `${workflow}#${shard}`;
}

/** Partition key on the sent index: `sent#<shard>`. */
export function sentShard(shard: number): string {
  return `sent#${shard}`;
}

// An upper bound for any number attribute: DynamoDB stores up to 38 digits in at most 21 bytes.
const NUMBER_BYTES = 21;

/**
 * Encodes a finite number as 16 hex digits whose string order is numeric order (the IEEE-754 bits,
 * sign flipped for positives and all bits inverted for negatives), so a string sort key orders by time.
 */
export function sortableNumber(x: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x === 0 ? 0 : x);
  let hi = view.getUint32(0);
  let lo = view.getUint32(4);
  if (hi & 0x80000000) {
    hi = ~hi >>> 0;
    lo = ~lo >>> 0;
  } else {
    hi = (hi | 0x80000000) >>> 0;
  }
  return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
}

/** Sort key of the due index: wake time, then id, so equal wake times come back in id order. */
export function dueKey(wakeAt: number, id: string): string {
  return `${sortableNumber(wakeAt)}#${id}`;
}

/** Exclusive upper bound for due (and sent) keys with a time <= `now` ('$' sorts right after '#'). */
export function dueBound(now: number): string {
  return `${sortableNumber(now)}$`;
}

/** Attribute of an instance item holding its search values (absent without any). */
export const SEARCH_ATTRIBUTE = 'search';

/** Values by attribute name, as a snapshot's `search`. */
export type SearchValues = Readonly<Record<string, SearchValue>>;

/**
 * The `search` text of `values`: JSON with the names sorted, so equal values give equal texts and
 * a save's condition can compare them; null for none.
 */
export function searchText(values: SearchValues | null | undefined): string | null {
  if (!values) return null;
  const names = Object.keys(values).sort();
  if (!names.length) return null;
  const sorted: Record<string, SearchValue> = {};
  for (const name of names) sorted[name] = values[name]!;
  return JSON.stringify(sorted);
}

/** UTF-8 bytes of the item's names and values, numbers counted at their largest. */
export function itemBytes(item: Record<string, AttributeValue>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) {
    bytes += snapshotBytes(name);
    if (value.S !== undefined) bytes += snapshotBytes(value.S);
    else if (value.N !== undefined) bytes += NUMBER_BYTES;
  }
  return bytes;
}

/**
 * The attributes a create or save writes (ids and the snapshot limit are checked by the kit), after
 * checking them against DynamoDB's 400 KB; throws before anything is sent. Never the inbox's.
 */
export function toItem(e: EncodedSnapshot, shards: number): Record<string, AttributeValue> {
  const item: Record<string, AttributeValue> = {
    id: { S: e.id },
    version: { N: String(e.version) },
    status: { S: e.status },
    workflow: { S: e.workflow },
    definition: { S: e.definition },
    listShard: { S: LIST_SHARD },
    snapshot: { S: e.json },
  };
  // No wake time, no due-index or lane-index entry.
  if (e.wakeAt !== null) {
    const shard = shardOf(e.id, shards);
    item['wakeAt'] = { N: String(e.wakeAt) };
    item['dueShard'] = { S: dueShard(shard) };
    item['laneShard'] = { S: laneShard(e.workflow, shard) };
    item['dueKey'] = { S: dueKey(e.wakeAt, e.id) };
  }
  const search = searchText(e.search);
  if (search !== null) item[SEARCH_ATTRIBUTE] = { S: search };
  const total = itemBytes(item);
  if (total > DYNAMO_ITEM_LIMIT) throw new SnapshotTooLargeError(e.id, total, DYNAMO_ITEM_LIMIT);
  return item;
}

/** The snapshot JSON held by an item read back with at least the `snapshot` attribute. */
export function jsonOf(item: Record<string, AttributeValue>): string {
  const json = item['snapshot']?.S;
  if (json === undefined) throw new Error('stored item has no snapshot attribute');
  return json;
}
