import {
  createStoreKit,
  type ListPage,
  type ListQuery,
  type Snapshot,
  type Store,
  type WakeSource,
} from '@stepfold/engine';
import type { Cluster, Redis } from 'ioredis';
import { CLAIM_DUE, LIST_DUE, RELEASE_DUE } from './due-scripts.js';
import { type HintRoute, hintArgs, type Row, scoreBound, toRow } from './encode.js';
import { inboxMethods } from './inbox.js';
import { assertPrefix, DEFAULT_PREFIX, hasHashTag, keysFor } from './keys.js';
import { isUnavailable } from './map-error.js';
import { CREATE, DELETE, LIST, runScript, SAVE, SAVE_CONSUME } from './scripts.js';
import { loadScripts } from './setup.js';
import { createWakeSource } from './wakes.js';

/** Default size limit: 16 MiB of snapshot JSON. */
export const DEFAULT_MAX_SNAPSHOT_BYTES = 16 * 1024 * 1024;

/** Highest accepted `maxSnapshotBytes`: a Redis string (and one bulk argument) holds at most 512 MiB. */
export const MAX_SNAPSHOT_BYTES_LIMIT = 512 * 1024 * 1024;

/** Default claim of the ids `listDue` returns: 30 s, measured against its `now`. */
export const DEFAULT_CLAIM_MS = 30_000;

/**
 * Default of `maxSkippedClaims`: old-scheme claims one `listDue` call steps over at most.
 * @deprecated see {@link RedisStoreOptions.maxSkippedClaims}.
 */
export const DEFAULT_MAX_SKIPPED_CLAIMS = 1000;

// Ids per releaseDue script: a long one blocks the server as long as a scan.
const RELEASE_CHUNK = 500;

/** Options of {@link createRedisStore}. */
export interface RedisStoreOptions {
  /** The caller's ioredis client (`Redis` or `Cluster`); the store never quits it. Must not set `keyPrefix`. */
  client: Redis | Cluster;
  /** Prepended to every key (default `stepfold:{sf}:`); a Cluster client needs a `{hash tag}` in it. */
  prefix?: string | undefined;
  /** Largest accepted snapshot, in UTF-8 bytes of its JSON (default 16 MiB, at most 512 MiB). */
  maxSnapshotBytes?: number | undefined;
  /**
   * How long the ids `listDue` and `claimDue` return stay claimed, in ms against their `now`
   * (default 30 000), unless the call's `leaseMs` says otherwise.
   */
  claimMs?: number | undefined;
  /**
   * @deprecated Claims no longer sit in the due order, so there is nothing to step over. It only
   * bounds how many claims made by an older version of this adapter (still live when this one
   * starts, at most `claimMs` after) one call steps over: it reads at most `limit +
   * min(old claims, maxSkippedClaims)` entries (default 1000) while any are left.
   */
  maxSkippedClaims?: number | undefined;
}

/** The Redis store: a {@link Store} whose claims, `releaseDue` and wake hints are always there. */
export interface RedisStore extends Store {
  readonly claimsDue: true;
  releaseDue(ids: readonly string[]): Promise<void>;
  readonly wakes: WakeSource;
}

/**
 * A stepfold store on Redis. Each instance is one hash under the prefix; create, save and delete are
 * one Lua script each, so the instance and its due, lane, status and workflow indexes change together,
 * and `save` is a compare-and-set on the stored version. `listDue` claims what it returns (a Lua
 * script moving the claimed entries of the due indexes to the claim's expiry), and writes that
 * announce a wake time publish a hint on the store's channel, which `wakes.subscribe` delivers.
 */
export function createRedisStore(options: RedisStoreOptions): RedisStore {
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
  const claimMs = options.claimMs ?? DEFAULT_CLAIM_MS;
  if (!(typeof claimMs === 'number' && claimMs > 0 && Number.isFinite(claimMs))) {
    throw new RangeError('claimMs must be a positive finite number of milliseconds');
  }
  const maxSkipped = options.maxSkippedClaims ?? DEFAULT_MAX_SKIPPED_CLAIMS;
  if (!(Number.isSafeInteger(maxSkipped) && maxSkipped >= 0)) {
    throw new RangeError('maxSkippedClaims must be a non-negative integer');
  }
  const keys = keysFor(prefix);
  // Sharded pub/sub on a cluster keeps each hint on the store's own shard (Redis 7); plain pub/sub
  // on one server works on every Redis version.
  const route: HintRoute = { command: client.isCluster ? 'SPUBLISH' : 'PUBLISH', channel: keys.wake };
  const wakes = createWakeSource(client, route, kit.guard);
  const rowKeys = (r: Row) => [
    keys.status(r.status),
    keys.workflow(r.workflow),
    keys.statusWorkflow(r.status, r.workflow),
    keys.dueWorkflow(r.workflow),
  ];
  // The claim scripts' keys: the index read, `due` (the same key when it is the one read; else the
  // other index its claims move), the old-scheme claims. A lane read from `due` is derived per
  // instance inside the script, from its stored workflow: same prefix, same hash tag, same slot.
  const dueKeys = (workflow: string | undefined) => [
    workflow === undefined ? keys.due : keys.dueWorkflow(workflow),
    keys.due,
    keys.claims,
  ];
  const dueArgs = (now: number, n: number, lease: number) => [
    scoreBound(now),
    n,
    scoreBound(now + lease),
    maxSkipped,
    prefix,
  ];

  return {
    maxSnapshotBytes: kit.maxSnapshotBytes,
    claimsDue: true,
    wakes: { subscribe: (listener) => wakes.subscribe(listener) },

    setup: () => loadScripts(client, kit.guard),
    ...inboxMethods(client, kit, keys, route, claimMs),

    async create(snapshot) {
      const e = kit.encode(snapshot);
      const r = toRow(e);
      const created = await kit.guard('create', () =>
        runScript(
          client,
          CREATE,
          [keys.instance(r.id), keys.due, keys.all, ...rowKeys(r)],
          [r.id, r.json, r.version, r.status, r.workflow, r.wakeAt, ...hintArgs(e, route)],
        ),
      );
      kit.created(created === 1, r.id);
    },

    async load(id) {
      const json = await kit.guard('load', () => client.hget(keys.instance(kit.id(id)), 'json'));
      return json === null ? null : kit.decode(json);
    },

    async save(snapshot, expectedVersion, consumed) {
      const e = kit.encode(snapshot);
      const r = toRow(e);
      const keyList = [keys.instance(r.id), keys.due, ...rowKeys(r), keys.claims];
      const args = [r.id, r.json, r.version, r.status, r.workflow, r.wakeAt, String(expectedVersion), prefix];
      const hint = hintArgs(e, route);
      // Consuming sent signals: three more keys, and the seqs after the hint's three ('' each when none).
      const reply = (await kit.guard('save', () =>
        consumed?.length
          ? runScript(
              client,
              SAVE_CONSUME,
              [...keyList, keys.sent(r.id), keys.sentDue, keys.sentClaims],
              [...args, ...(hint.length ? hint : ['', '', '']), ...kit.seqs(consumed)],
            )
          : runScript(client, SAVE, keyList, hint.length ? [...args, ...hint] : args),
      )) as [number, string?];
      kit.updated(
        reply[0] === 1 ? 'written' : reply[0] === 0 ? 'missing' : { stored: Number(reply[1]) },
        r.id,
        expectedVersion,
      );
    },

    async listDue(now, limit, query) {
      const n = kit.dueLimit(now, limit);
      const workflow = kit.dueWorkflow(query);
      const lease = kit.dueLease(query, claimMs);
      // Nothing is due before -inf (wake times are finite): no claim to take, no call to make.
      if (n === null || workflow === null || now === Number.NEGATIVE_INFINITY) return [];
      const reply = (await kit.guard('listDue', () =>
        runScript(client, LIST_DUE, dueKeys(workflow), dueArgs(now, n, lease)),
      )) as unknown[];
      return reply.slice(1) as string[]; // after the count of entries read
    },

    async claimDue(now, limit, query) {
      const n = kit.dueLimit(now, limit);
      const workflow = kit.dueWorkflow(query);
      const lease = kit.dueLease(query, claimMs);
      const ids = query?.ids === undefined ? [] : Array.from(query.ids, (id) => kit.id(id));
      if (n === null || workflow === null || now === Number.NEGATIVE_INFINITY) return [];
      if (query?.ids !== undefined && ids.length === 0) return [];
      const reply = (await kit.guard('claimDue', () =>
        runScript(client, CLAIM_DUE, dueKeys(workflow), [...dueArgs(now, n, lease), ...ids]),
      )) as unknown[];
      // {entries read, id, json, id, json, …}
      const out: Snapshot[] = [];
      for (let i = 2; i < reply.length; i += 2) out.push(kit.decode(reply[i] as string));
      return out;
    },

    async releaseDue(ids) {
      const valid = ids.map((id) => kit.id(id));
      for (let i = 0; i < valid.length; i += RELEASE_CHUNK) {
        const chunk = valid.slice(i, i + RELEASE_CHUNK);
        await kit.guard('releaseDue', () =>
          runScript(client, RELEASE_DUE, [keys.due, keys.claims], [prefix, ...chunk]),
        );
      }
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
      const valid = kit.id(id);
      const existed = await kit.guard('delete', () =>
        runScript(
          client,
          DELETE,
          [
            keys.instance(valid),
            keys.due,
            keys.all,
            keys.claims,
            keys.sent(valid),
            keys.sentDue,
            keys.sentClaims,
          ],
          [valid, prefix],
        ),
      );
      return existed === 1;
    },

    async close() {
      // The ioredis client belongs to the caller; the wake subscriptions' connections are the store's.
      await wakes.closeAll();
    },
  };
}
