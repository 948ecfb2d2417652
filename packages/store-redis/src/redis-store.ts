import { createHash } from 'node:crypto';
import type { DueClaims, Inbox, StreamStore, WakeSource } from '@stepfold/engine';
import {
  type DefinedStore,
  defineStore,
  type EncodedSnapshot,
  instancesToWake,
  type ListArgs,
  type StoreDriver,
} from '@stepfold/engine';
import type { Cluster, Redis } from 'ioredis';
import { dueDriver } from './claims.js';
import { CREATE_FLOW, createFlowArgs } from './create-flow.js';
import { type HintRoute, hintArgs, rowArgs } from './encode.js';
import { flowNames, redisFlow, waitersOf } from './flow.js';
import { inboxDriver } from './inbox.js';
import { assertPrefix, DEFAULT_PREFIX, hasHashTag, keysFor } from './keys.js';
import { isUnavailable } from './map-error.js';
import { SAVE_FLOW, saveFlowArgs } from './save-flow.js';
import { CREATE, DELETE, LIST, runScript, SAVE, SCRIPTS } from './scripts.js';
import { searchField } from './search-entries.js';
import { redisSearchPage } from './search-page.js';
import { redisStream } from './stream.js';
import { createWakeSource } from './wakes.js';

export { DEFAULT_CLAIM_MS } from '@stepfold/engine';

/** Default size limit: 16 MiB of snapshot JSON. */
export const DEFAULT_MAX_SNAPSHOT_BYTES = 16 * 1024 * 1024;

/** Highest accepted `maxSnapshotBytes`: a Redis string (and one bulk argument) holds at most 512 MiB. */
export const MAX_SNAPSHOT_BYTES_LIMIT = 512 * 1024 * 1024;

/**
 * Default of `maxSkippedClaims`: old-scheme claims one due read steps over at most.
 * @deprecated see {@link RedisStoreOptions.maxSkippedClaims}.
 */
export const DEFAULT_MAX_SKIPPED_CLAIMS = 1000;

/** Options of {@link createRedisStore}. */
export interface RedisStoreOptions {
  /** The caller's ioredis client (`Redis` or `Cluster`); the store never quits it. Must not set `keyPrefix`. */
  client: Redis | Cluster;
  /** Prepended to every key (default `stepfold:{sf}:`); a Cluster client needs a `{hash tag}` in it. */
  prefix?: string | undefined;
  /** Largest accepted snapshot, in UTF-8 bytes of its JSON (default 16 MiB, at most 512 MiB). */
  maxSnapshotBytes?: number | undefined;
  /**
   * How long the ids `listDue` and `claims.claimDue` return stay claimed, in ms against their `now`
   * (default 30 000), unless the call's `leaseMs` says otherwise.
   */
  claimMs?: number | undefined;
  /**
   * @deprecated Claims (the due order's and the inbox's) no longer sit in the order they claim
   * from, so there is nothing to step over. It only bounds how many claims made by an older version
   * of this adapter (still live when this one starts, at most `claimMs` after) one call steps over:
   * it reads at most `limit + min(old claims, maxSkippedClaims)` entries (default 1000) while any
   * are left.
   */
  maxSkippedClaims?: number | undefined;
}

/** The Redis store: a {@link DefinedStore} whose claims, inbox, wake notices and streams are always there. */
export interface RedisStore extends DefinedStore {
  readonly claims: DueClaims;
  readonly inbox: Inbox;
  readonly wakes: WakeSource;
  readonly stream: StreamStore;
}

/**
 * A stepfold store on Redis. Each instance is one hash under the prefix; create, save and delete are
 * one Lua script each, so the instance and its due, lane, status and workflow indexes change together,
 * and `save` is a compare-and-set on the stored version. `listDue` claims what it returns (a Lua
 * script moving the claimed entries of the due indexes to the claim's expiry), `inbox.send` appends a
 * signal in one script, and writes that announce a wake time publish a notice on the store's channel,
 * which `wakes.subscribe` delivers. Each instance's stream (`store.stream`) is a Redis stream of
 * its own, in a slot of its own (see the README).
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
  const maxSkipped = options.maxSkippedClaims ?? DEFAULT_MAX_SKIPPED_CLAIMS;
  if (!(Number.isSafeInteger(maxSkipped) && maxSkipped >= 0)) {
    throw new RangeError('maxSkippedClaims must be a non-negative integer');
  }
  const keys = keysFor(prefix);
  // Sharded pub/sub on a cluster keeps each notice on the store's own shard (Redis 7); plain pub/sub
  // on one server works on every Redis version.
  const route: HintRoute = { command: client.isCluster ? 'SPUBLISH' : 'PUBLISH', channel: keys.wake };
  const wakes = createWakeSource(client, route);
  const flowKeys = flowNames(keys);
  const stream = redisStream(client, prefix);
  /** The row's own index keys: status, workflow, both, lane. */
  const indexKeys = (e: EncodedSnapshot) => [
    keys.status(e.status),
    keys.workflow(e.workflow),
    keys.statusWorkflow(e.status, e.workflow),
    keys.dueWorkflow(e.workflow),
  ];

  /** A page of the plain indexes (status, workflow, both, or all), in id order. */
  const plainPage = async ({ status, workflow, cursor, limit }: ListArgs) => {
    const index =
      status && workflow
        ? keys.statusWorkflow(status, workflow)
        : status
          ? keys.status(status)
          : workflow
            ? keys.workflow(workflow)
            : keys.all;
    const reply = (await runScript(client, LIST, [index], [cursor ?? '', limit + 1, prefix])) as string[];
    const rows: Array<{ id: string; json: string }> = [];
    for (let i = 0; i + 1 < reply.length; i += 2) rows.push({ id: reply[i]!, json: reply[i + 1]! });
    return rows;
  };

  const driver: StoreDriver = {
    async setup() {
      // Keys appear on first write; loading saves the first EVAL of each script.
      for (const s of SCRIPTS) await client.script('LOAD', s.lua);
    },
    async insert(e, flow) {
      const keyList = [keys.instance(e.id), keys.due, keys.all, ...indexKeys(e)];
      const args = [...rowArgs(e), prefix, ...hintArgs(e, route), searchField(e.id, e.search)];
      if (!flow) return (await runScript(client, CREATE, keyList, args)) === 1;
      // One server only (the driver's flow has inInsert there): the take in the create's script.
      const reply = await runScript(
        client,
        CREATE_FLOW,
        [...keyList, flowKeys.index, flowKeys.holderIndex(flow.take.holder)],
        [...args, ...createFlowArgs(flow, flowKeys.needArgs)],
      );
      return reply === 4 ? 'refused' : reply === 1;
    },
    select: (id) => client.hget(keys.instance(id), 'json'),
    async update(e, c) {
      const sentKeys = [keys.sent(e.id), keys.sentDue, keys.sentClaims];
      const keyList = [keys.instance(e.id), keys.due, ...indexKeys(e), keys.claims, ...sentKeys];
      const match = c.match?.digest ?? '';
      const args = [
        ...rowArgs(e),
        c.expected,
        prefix,
        ...hintArgs(e, route),
        searchField(e.id, e.search),
        match,
        ...(c.consumed ?? []),
      ];
      const flow = c.flow;
      if (flow) {
        // One server only (the driver's flow has inUpdate there): the flow work in the save's script.
        const taker = flowKeys.holderIndex(flow.take?.holder ?? '');
        const flowKeyList = [flowKeys.index, taker, ...(flow.release ?? []).map(flowKeys.holderIndex)];
        const reply = (await runScript(
          client,
          SAVE_FLOW,
          [...keyList, ...flowKeyList],
          [...args, ...saveFlowArgs(flow, flowKeys.needArgs)],
        )) as [number, ...string[]];
        if (reply[0] === 1) return { woken: instancesToWake(waitersOf(reply as string[], 1)) };
        if (reply[0] === 4) return 'refused';
        return reply[0] === 2 ? { stored: Number(reply[1]) } : 'missing';
      }
      const [code, stored] = (await runScript(client, SAVE, keyList, args)) as [number, string?];
      // 3: the match failed; defineStore tells a forged notice from a lost race by the version.
      if (code === 2) return { stored: Number(stored) };
      return code === 1 ? 'written' : code === 0 ? 'missing' : 'failed';
    },
    async version(id) {
      const v = await client.hget(keys.instance(id), 'version');
      return v === null ? null : Number(v);
    },
    ...dueDriver(client, keys, maxSkipped),
    // Search attributes are indexed (a sorted set per attribute): `where` and `orderBy` read only
    // the members their conditions select (search-page.ts).
    searches: true,
    page: (args) =>
      args.search ? redisSearchPage(client, keys, args, args.search, plainPage) : plainPage(args),
    async remove(id, version) {
      const keyList = [
        keys.instance(id),
        keys.due,
        keys.all,
        keys.claims,
        keys.sent(id),
        keys.sentDue,
        keys.sentClaims,
      ];
      return (await runScript(client, DELETE, keyList, [id, prefix, version ?? ''])) === 1;
    },
    // The ioredis client belongs to the caller; the wake subscriptions' connections are the store's.
    close: async () => {
      stream.closeAll();
      await wakes.closeAll();
    },
    inbox: inboxDriver(client, keys, route, maxSkipped),
    flow: redisFlow(client, keys),
    stream,
    wakes: { subscribe: (listener) => wakes.subscribe(listener) },
  };
  const sizes = {
    asked: options.maxSnapshotBytes,
    fallback: DEFAULT_MAX_SNAPSHOT_BYTES,
    most: MAX_SNAPSHOT_BYTES_LIMIT,
  };
  // SHA-1: what the save script's redis.sha1hex computes over the stored snapshot and signals.
  // Node's hash, not WebCrypto's: synchronous, so a take from a notice waits for no thread hop.
  const digest = async (text: string) => createHash('sha1').update(text).digest('hex');
  return defineStore(
    { name: 'redis', isUnavailable, sizes, claimMs: options.claimMs, digest },
    driver,
  ) as RedisStore;
}
