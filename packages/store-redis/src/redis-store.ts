import {
  AlreadyExistsError,
  assertValidId,
  type ListPage,
  type ListQuery,
  NotFoundError,
  type Snapshot,
  SnapshotTooLargeError,
  type Store,
  snapshotBytes,
  VersionConflictError,
} from '@stepfold/engine';
import type { Cluster, Redis } from 'ioredis';
import { assertPrefix, DEFAULT_PREFIX, hasHashTag, keysFor } from './keys.js';
import { guard } from './map-error.js';
import { CREATE, DELETE, LIST, runScript, SAVE, SCRIPTS } from './scripts.js';

/** Default size limit: 16 MiB of snapshot JSON. */
export const DEFAULT_MAX_SNAPSHOT_BYTES = 16 * 1024 * 1024;

/** Highest accepted `maxSnapshotBytes`: a Redis string (and one bulk argument) holds at most 512 MiB. */
export const MAX_SNAPSHOT_BYTES_LIMIT = 512 * 1024 * 1024;

// Larger pages would only build replies nobody can hold; LIMIT takes integers.
const MAX_PAGE = 1_000_000_000;

/** Options of {@link createRedisStore}. */
export interface RedisStoreOptions {
  /** The caller's ioredis client (`Redis` or `Cluster`); the store never quits it. Must not set `keyPrefix`. */
  client: Redis | Cluster;
  /** Prepended to every key (default `stepfold:{sf}:`); a Cluster client needs a `{hash tag}` in it. */
  prefix?: string;
  /** Largest accepted snapshot, in UTF-8 bytes of its JSON (default 16 MiB, at most 512 MiB). */
  maxSnapshotBytes?: number;
}

interface Row {
  id: string;
  json: string;
  version: string;
  status: string;
  workflow: string;
  /** The due-index score, '' when the instance has no wake time. */
  wakeAt: string;
}

/** A `ZRANGEBYSCORE` bound for `now`. */
function scoreBound(now: number): string {
  if (typeof now !== 'number' || Number.isNaN(now)) throw new RangeError('listDue: now must be a number');
  if (now === Number.POSITIVE_INFINITY) return '+inf';
  if (now === Number.NEGATIVE_INFINITY) return '-inf';
  return String(now);
}

/** `limit` as a page size for LIMIT: 0 for none, capped, integer. */
function pageSize(limit: number): number {
  return limit > 0 ? Math.min(Math.floor(limit), MAX_PAGE) : 0;
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
  const maxSnapshotBytes = options.maxSnapshotBytes ?? DEFAULT_MAX_SNAPSHOT_BYTES;
  if (
    !(
      Number.isInteger(maxSnapshotBytes) &&
      maxSnapshotBytes > 0 &&
      maxSnapshotBytes <= MAX_SNAPSHOT_BYTES_LIMIT
    )
  ) {
    throw new RangeError(`maxSnapshotBytes must be an integer in 1..${MAX_SNAPSHOT_BYTES_LIMIT}`);
  }
  const keys = keysFor(prefix);

  // Validates and serializes before anything is sent, so a rejected snapshot never reaches the server.
  const toRow = (snapshot: Snapshot): Row => {
    assertValidId(snapshot.id);
    assertValidId(snapshot.workflow?.name, 'workflow name');
    assertValidId(snapshot.status, 'status');
    const json = JSON.stringify(snapshot);
    // A UTF-16 code unit is at most 3 UTF-8 bytes: count them only when the limit may be near.
    if (json.length * 3 > maxSnapshotBytes) {
      const bytes = snapshotBytes(json);
      if (bytes > maxSnapshotBytes) throw new SnapshotTooLargeError(snapshot.id, bytes, maxSnapshotBytes);
    }
    return {
      id: snapshot.id,
      json,
      version: String(snapshot.version),
      status: snapshot.status,
      workflow: snapshot.workflow.name,
      // JSON has no Infinity or NaN: index what `load` will give back.
      wakeAt: Number.isFinite(snapshot.wakeAt) ? String(snapshot.wakeAt) : '',
    };
  };

  const rowKeys = (r: Row) => [
    keys.status(r.status),
    keys.workflow(r.workflow),
    keys.statusWorkflow(r.status, r.workflow),
  ];

  return {
    maxSnapshotBytes,

    async setup() {
      // Nothing to create: keys appear on first write. Loading the scripts saves the first EVAL.
      for (const s of SCRIPTS) await guard('setup', () => client.script('LOAD', s.lua));
    },

    async create(snapshot) {
      const r = toRow(snapshot);
      const created = await guard('create', () =>
        runScript(
          client,
          CREATE,
          [keys.instance(r.id), keys.due, keys.all, ...rowKeys(r)],
          [r.id, r.json, r.version, r.status, r.workflow, r.wakeAt],
        ),
      );
      if (created !== 1) throw new AlreadyExistsError(r.id);
    },

    async load(id) {
      assertValidId(id);
      const json = await guard('load', () => client.hget(keys.instance(id), 'json'));
      return json === null ? null : (JSON.parse(json) as Snapshot);
    },

    async save(snapshot, expectedVersion) {
      const r = toRow(snapshot);
      const reply = (await guard('save', () =>
        runScript(
          client,
          SAVE,
          [keys.instance(r.id), keys.due, ...rowKeys(r)],
          [r.id, r.json, r.version, r.status, r.workflow, r.wakeAt, String(expectedVersion), prefix],
        ),
      )) as [number, string?];
      if (reply[0] === 1) return;
      if (reply[0] === 0) throw new NotFoundError(r.id);
      throw new VersionConflictError(r.id, expectedVersion, Number(reply[1]));
    },

    async listDue(now, limit) {
      const max = scoreBound(now);
      const n = pageSize(limit);
      if (n === 0) return [];
      return guard('listDue', () => client.zrangebyscore(keys.due, '-inf', max, 'LIMIT', 0, n));
    },

    async list(query: ListQuery): Promise<ListPage> {
      const { status, workflow, cursor } = query;
      for (const [key, value] of Object.entries({ status, workflow, cursor })) {
        if (value !== undefined && value !== null && typeof value !== 'string') {
          throw new TypeError(`list: ${key} must be a string`);
        }
      }
      const n = pageSize(query.limit);
      if (n === 0) return { items: [], cursor: cursor ?? null };
      // Every stored status and workflow name is a valid id: anything else matches nothing.
      if (status) assertValidId(status, 'status');
      if (workflow) assertValidId(workflow, 'workflow');
      const index =
        status && workflow
          ? keys.statusWorkflow(status, workflow)
          : status
            ? keys.status(status)
            : workflow
              ? keys.workflow(workflow)
              : keys.all;
      const reply = (await guard('list', () =>
        runScript(client, LIST, [index], [cursor ?? '', n, n + 1, prefix]),
      )) as [number, ...string[]];
      const items: Snapshot[] = [];
      let last: string | null = null;
      for (let i = 1; i + 1 < reply.length; i += 2) {
        last = reply[i] as string;
        items.push(JSON.parse(reply[i + 1] as string) as Snapshot);
      }
      return { items, cursor: reply[0] === 1 ? last : null };
    },

    async delete(id) {
      assertValidId(id);
      const existed = await guard('delete', () =>
        runScript(client, DELETE, [keys.instance(id), keys.due, keys.all], [id, prefix]),
      );
      return existed === 1;
    },

    async close() {
      // The ioredis client belongs to the caller.
    },
  };
}
