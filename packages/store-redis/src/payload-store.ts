import { definePayloadStore, type PayloadDriver, type PayloadStore } from '@stepfold/engine';
import type { Cluster, Redis } from 'ioredis';
import { assertPrefix } from './keys.js';
import { isUnavailable } from './map-error.js';

/** Default key prefix of the payload store: no hash tag of its own, so each owner's `{owner}` tag spreads owners over a cluster. */
export const DEFAULT_PAYLOAD_PREFIX = 'stepfold:';

/** Default body limit of the Redis payload store: the kit's 16 MiB. */
export { DEFAULT_MAX_PAYLOAD_BYTES } from '@stepfold/engine';

/** Highest accepted `maxPayloadBytes`: a hash value (and one bulk argument) holds at most 512 MiB. */
export const MAX_PAYLOAD_BYTES_LIMIT = 512 * 1024 * 1024;

/** Options of {@link createRedisPayloadStore}. */
export interface RedisPayloadStoreOptions {
  /** Your ioredis client (`Redis` or `Cluster`); never disconnected by the store. */
  client: Redis | Cluster;
  /** Key prefix (default `stepfold:`): printable ASCII, at most one `{tag}` (which then holds every owner's keys). */
  prefix?: string | undefined;
  /** Largest accepted body, in UTF-8 bytes (default 16 MiB, at most 512 MiB). */
  maxPayloadBytes?: number | undefined;
}

/** A Redis-backed payload store, and its key names. */
export interface RedisPayloadStore extends PayloadStore {
  /** The key prefix. */
  readonly prefix: string;
  /** The hash holding `owner`'s bodies (field = sha256). */
  bodiesKey(owner: string): string;
  /** The sorted set (score 0, member = sha256) `list` pages through. */
  indexKey(owner: string): string;
}

type Replies = Array<[Error | null, unknown]> | null;

/** The replies of a MULTI, or the first command error in them. */
function replies(results: Replies): unknown[] {
  if (!results) throw new Error('redis payloads: transaction aborted');
  return results.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}

/**
 * A payload store on Redis (or Redis Cluster): one hash per owner, `<prefix>p:{<owner>}` (field =
 * sha256, value = body, written with HSETNX so a body is never replaced), and beside it the sorted
 * set `<prefix>p:{<owner>}:i` of its hashes for ordered paging. The `{owner}` hash tag keeps an
 * owner's two keys in one cluster slot, so each call is one MULTI and `deleteOwner` one DEL.
 * `setup()` creates nothing (it checks the server answers).
 *
 * @example
 * const payloads = createRedisPayloadStore({ client: new Redis(url) });
 * await payloads.put('order-1', sha256Hex(json), json);
 */
export function createRedisPayloadStore(options: RedisPayloadStoreOptions): RedisPayloadStore {
  const { client } = options;
  const prefix = options.prefix ?? DEFAULT_PAYLOAD_PREFIX;
  assertPrefix(prefix);
  // Owners are valid ids, which never hold braces: `{owner}` is always a whole hash tag.
  const bodiesKey = (owner: string) => `${prefix}p:{${owner}}`;
  const indexKey = (owner: string) => `${prefix}p:{${owner}}:i`;

  const driver: PayloadDriver = {
    async setup() {
      await client.ping();
    },
    async put({ owner, sha256, body }) {
      replies(
        await client.multi().hsetnx(bodiesKey(owner), sha256, body).zadd(indexKey(owner), 0, sha256).exec(),
      );
    },
    async get(owner, sha256) {
      return client.hget(bodiesKey(owner), sha256);
    },
    async list(owner, after, limit) {
      return client.zrangebylex(indexKey(owner), after === null ? '-' : `(${after}`, '+', 'LIMIT', 0, limit);
    },
    async delete(owner, sha256s) {
      const [removed] = replies(
        await client
          .multi()
          .hdel(bodiesKey(owner), ...sha256s)
          .zrem(indexKey(owner), ...sha256s)
          .exec(),
      );
      return Number(removed);
    },
    async deleteOwner(owner) {
      const [count] = replies(
        await client.multi().hlen(bodiesKey(owner)).del(bodiesKey(owner), indexKey(owner)).exec(),
      );
      return Number(count);
    },
  };
  return definePayloadStore(
    {
      name: 'redis payloads',
      isUnavailable,
      sizes: { asked: options.maxPayloadBytes, most: MAX_PAYLOAD_BYTES_LIMIT },
    },
    driver,
    { prefix, bodiesKey, indexKey },
  );
}
