import {
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { definePayloadStore, type PayloadDriver, type PayloadStore, sha256Hex } from '@stepfold/engine';
import { conditional, isUnavailable } from './map-error.js';
import {
  batchWrite,
  chunkKey,
  chunkPrefix,
  deletesOf,
  headKey,
  itemKey,
  PAYLOAD_CHUNK_BYTES,
  preparePayloadTable,
  queryItems,
  sortKeys,
} from './payload-table.js';
import { type Item, pooled } from './requests.js';
import { assertTableName, type EnsureTableOptions } from './setup.js';

/** Default payload table name. */
export const DEFAULT_PAYLOAD_TABLE = 'stepfold_payloads';

/** Default body limit of the DynamoDB payload store: the kit's 16 MiB (48 chunks). */
export { DEFAULT_MAX_PAYLOAD_BYTES } from '@stepfold/engine';

/** Highest accepted `maxPayloadBytes`: 256 MiB (749 chunks). */
export const MAX_PAYLOAD_BYTES_LIMIT = 256 * 1024 * 1024;

/** Options of {@link createDynamoPayloadStore}. */
export interface DynamoPayloadStoreOptions {
  /** The caller's client; never destroyed by the store. */
  client: DynamoDBClient;
  /** Table holding the payloads (default `stepfold_payloads`); not the instance table. */
  table?: string | undefined;
  /** Largest accepted body, in UTF-8 bytes (default 16 MiB, at most 256 MiB). */
  maxPayloadBytes?: number | undefined;
  /** How long `setup` waits for a new table to become ACTIVE. */
  setup?: EnsureTableOptions | undefined;
}

/** A DynamoDB-backed payload store, and its table. */
export interface DynamoPayloadStore extends PayloadStore {
  /** Payload table name. */
  readonly table: string;
}

const fatal = new TextDecoder('utf-8', { fatal: true });

/** The UTF-8 text of `bytes`, or null when they are not valid UTF-8 (never a replacement character). */
function decoded(bytes: Uint8Array): string | null {
  try {
    return fatal.decode(bytes);
  } catch {
    return null;
  }
}

/** The body from its chunks, or null unless they are exactly the head's count and size and hash to its name. */
function reassemble(sha256: string, head: Item, chunks: readonly Item[]): string | null {
  const n = Number(head['n']?.N);
  const bytes = Number(head['z']?.N);
  if (chunks.length !== n) return null;
  const all = new Uint8Array(bytes);
  let at = 0;
  for (const [i, chunk] of chunks.entries()) {
    const part = chunk['b']?.B;
    if (chunk['k']?.S !== chunkKey(sha256, i) || !part || at + part.length > bytes) return null;
    all.set(part, at);
    at += part.length;
  }
  if (at !== bytes) return null;
  const body = decoded(all);
  return body !== null && sha256Hex(body) === sha256 ? body : null;
}

/**
 * A payload store on DynamoDB, in a table of its own keyed `(o, k)`: a body up to 350 KiB lives in
 * its head item; a larger one is split into 350 KiB chunk items of its UTF-8 bytes (written first,
 * with BatchWriteItem) and a head naming their count and size (written last), so a body whose
 * chunks are not all there reads as missing, never as a wrong value, and a reassembled body is
 * checked against its hash. `setup()` creates the table (on-demand billing).
 *
 * @example
 * const payloads = createDynamoPayloadStore({ client });
 * await payloads.setup();
 * await payloads.put('order-1', sha256Hex(json), json); // 2 MB is fine: 6 chunks
 */
export function createDynamoPayloadStore(options: DynamoPayloadStoreOptions): DynamoPayloadStore {
  const { client } = options;
  const table = options.table ?? DEFAULT_PAYLOAD_TABLE;
  assertTableName(table);

  const driver: PayloadDriver = {
    setup: () => preparePayloadTable(client, table, options.setup ?? {}),
    async put({ owner, sha256, body, bytes }) {
      const utf8 = new TextEncoder().encode(body);
      const head: Item = { ...itemKey(owner, headKey(sha256)), z: { N: String(bytes) } };
      if (utf8.length <= PAYLOAD_CHUNK_BYTES) {
        // Immutable content: an existing head is this very payload.
        const write = new PutItemCommand({
          TableName: table,
          Item: { ...head, n: { N: '0' }, b: { B: utf8 } },
          ConditionExpression: 'attribute_not_exists(k)',
        });
        await conditional(client.send(write));
        return;
      }
      // A retried upload of a large body costs one read, not its chunks again.
      const found = await client.send(
        new GetItemCommand({
          TableName: table,
          Key: itemKey(owner, headKey(sha256)),
          ConsistentRead: true,
          ProjectionExpression: 'k',
        }),
      );
      if (found.Item) return;
      const n = Math.ceil(utf8.length / PAYLOAD_CHUNK_BYTES);
      const chunks = Array.from({ length: n }, (_, i) => ({
        PutRequest: {
          Item: {
            ...itemKey(owner, chunkKey(sha256, i)),
            b: { B: utf8.subarray(i * PAYLOAD_CHUNK_BYTES, (i + 1) * PAYLOAD_CHUNK_BYTES) },
          },
        },
      }));
      await batchWrite(client, table, chunks);
      // The head last: until it is written the payload does not exist. Unconditional, so a racing
      // delete that removed the chunks before ours landed is followed by a head naming ours.
      await client.send(new PutItemCommand({ TableName: table, Item: { ...head, n: { N: String(n) } } }));
    },
    async get(owner, sha256) {
      const out = await client.send(
        new GetItemCommand({ TableName: table, Key: itemKey(owner, headKey(sha256)), ConsistentRead: true }),
      );
      const head = out.Item;
      if (!head) return null;
      if (head['n']?.N === '0') {
        const inline = head['b']?.B;
        return inline ? decoded(inline) : null;
      }
      return reassemble(
        sha256,
        head,
        await queryItems(client, table, owner, chunkPrefix(sha256), { full: true }),
      );
    },
    async list(owner, after, limit) {
      const start = after === null ? undefined : headKey(after);
      return sortKeys(await queryItems(client, table, owner, 'h#', { start, limit })).map((k) => k.slice(2));
    },
    async delete(owner, sha256s) {
      const gone = await pooled(sha256s, async (sha256) => {
        // The head first: from then on the payload is missing, whatever happens to its chunks.
        const removed = await conditional(
          client.send(
            new DeleteItemCommand({
              TableName: table,
              Key: itemKey(owner, headKey(sha256)),
              ConditionExpression: 'attribute_exists(k)',
            }),
          ),
        );
        // Chunks are looked for even without a head: a put that stopped halfway left some.
        await batchWrite(
          client,
          table,
          deletesOf(owner, sortKeys(await queryItems(client, table, owner, chunkPrefix(sha256)))),
        );
        return removed === null ? 0 : 1;
      });
      return gone.reduce<number>((a, b) => a + b, 0);
    },
    async deleteOwner(owner) {
      const heads = sortKeys(await queryItems(client, table, owner, 'h#'));
      await batchWrite(client, table, deletesOf(owner, heads));
      await batchWrite(
        client,
        table,
        deletesOf(owner, sortKeys(await queryItems(client, table, owner, 'c#'))),
      );
      return heads.length;
    },
  };
  return definePayloadStore(
    {
      name: 'dynamodb payloads',
      isUnavailable,
      sizes: { asked: options.maxPayloadBytes, most: MAX_PAYLOAD_BYTES_LIMIT },
    },
    driver,
    { table },
  );
}
