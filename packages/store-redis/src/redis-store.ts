import { createStoreKit, type ListPage, type ListQuery, type Store } from '@stepfold/engine';
import type { Cluster, Redis } from 'ioredis';
import { type Row, scoreBound, toRow } from './encode.js';
import { assertPrefix, DEFAULT_PREFIX, hasHashTag, keysFor } from './keys.js';
import { isUnavailable } from './map-error.js';
import { CREATE, DELETE, LIST, runScript, SAVE } from './scripts.js';
import { loadScripts } from './setup.js';

/** Default size limit: 16 MiB of snapshot JSON. */
export const DEFAULT_MAX_SNAPSHOT_BYTES = 16 * 1024 * 1024;

/** Highest accepted `maxSnapshotBytes`: a Redis string (and one bulk argument) holds at most 512 MiB. */
export const MAX_SNAPSHOT_BYTES_LIMIT = 512 * 1024 * 1024;

/** Options of {@link createRedisStore}. */
export interface RedisStoreOptions {
  /** The caller's ioredis client (`Redis` or `Cluster`); the store never quits it. Must not set `keyPrefix`. */
  client: Redis | Cluster;
  /** Prepended to every key (default `stepfold:{sf}:`); a Cluster client needs a `{hash tag}` in it. */
  prefix?: string;
  /** Largest accepted snapshot, in UTF-8 bytes of its JSON (default 16 MiB, at most 512 MiB). */
  maxSnapshotBytes?: number;
}

/**
 * A stepfold store on Redis. Each instance is one hash under the prefix; create, save and delete are
 * one Lua script each, so the instance and its due, status and workflow indexes change together, and
 * `save` is a compare-and-set on the stored version.
 */
export function createRedisStore(options: RedisStoreOptions): Store {
  const { client } = options;
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  assertPrefix(prefix);
  if ((client as { options?: { keyPrefix?: unknown } }).options?.keyPrefix) {
    throw new TypeError('the ioredis client sets keyPrefix; pass it as the store prefix option instead');
  }
  if (client.isCluster && !hasHashTag(prefix)) {
    throw new TypeError(
      `a Redis Cluster needs every key of the store in one slot: put a hash tag in the prefix, e.g. "${DEFAULT_PREFIX}"`,
    );
  }
  const kit = createStoreKit('redis', isUnavailable, {
    asked: options.maxSnapshotBytes,
    fallback: DEFAULT_MAX_SNAPSHOT_BYTES,
    most: MAX_SNAPSHOT_BYTES_LIMIT,
  });
  const keys = keysFor(prefix);
  const rowKeys = (r: Row) => [
    keys.status(r.status),
    keys.workflow(r.workflow),
    keys.statusWorkflow(r.status, r.workflow),
  ];

  return {
    maxSnapshotBytes: kit.maxSnapshotBytes,

    setup: () => loadScripts(client, kit.guard),

    async create(snapshot) {
      const r = toRow(kit.encode(snapshot));
      const created = await kit.guard('create', () =>
        runScript(
          client,
          CREATE,
          [keys.instance(r.id), keys.due, keys.all, ...rowKeys(r)],
          [r.id, r.json, r.version, r.status, r.workflow, r.wakeAt],
        ),
      );
      kit.created(created === 1, r.id);
    },

    async load(id) {
      const json = await kit.guard('load', () => client.hget(keys.instance(kit.id(id)), 'json'));
      return json === null ? null : kit.decode(json);
    },

    async save(snapshot, expectedVersion) {
      const r = toRow(kit.encode(snapshot));
      const reply = (await kit.guard('save', () =>
        runScript(
          client,
          SAVE,
          [keys.instance(r.id), keys.due, ...rowKeys(r)],
          [r.id, r.json, r.version, r.status, r.workflow, r.wakeAt, String(expectedVersion), prefix],
        ),
      )) as [number, string?];
      kit.updated(
        reply[0] === 1 ? 'written' : reply[0] === 0 ? 'missing' : { stored: Number(reply[1]) },
        r.id,
        expectedVersion,
      );
    },

    async listDue(now, limit) {
      const n = kit.dueLimit(now, limit);
      if (n === null) return [];
      return kit.guard('listDue', () =>
        client.zrangebyscore(keys.due, '-inf', scoreBound(now), 'LIMIT', 0, n),
      );
    },

    async list(query: ListQuery): Promise<ListPage> {
      const args = kit.listArgs(query);
      if (!args) return { items: [], cursor: query.cursor || null };
      const { status, workflow, cursor, limit } = args;
      const index =
        status && workflow
          ? keys.statusWorkflow(status, workflow)
          : status
            ? keys.status(status)
            : workflow
              ? keys.workflow(workflow)
              : keys.all;
      const reply = (await kit.guard('list', () =>
        runScript(client, LIST, [index], [cursor ?? '', limit + 1, prefix]),
      )) as string[];
      const rows: Array<{ id: string; json: string }> = [];
      for (let i = 0; i + 1 < reply.length; i += 2) rows.push({ id: reply[i]!, json: reply[i + 1]! });
      return kit.page(rows, limit);
    },

    async delete(id) {
      const existed = await kit.guard('delete', () =>
        runScript(client, DELETE, [keys.instance(kit.id(id)), keys.due, keys.all], [id, prefix]),
      );
      return existed === 1;
    },

    async close() {
      // The ioredis client belongs to the caller.
    },
  };
}
