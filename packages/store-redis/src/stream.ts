import type { StoredStreamEntry, StreamDriver } from '@stepfold/engine';
import type { Cluster, Redis } from 'ioredis';
import { flowPrefixOf } from './flow.js';
import { runScript } from './scripts.js';
import { APPEND_STREAM, READ_STREAM } from './stream-scripts.js';

// The stream capability on Redis streams: an instance's entries are one Redis stream whose entry
// ids are `0-<offset + 1>` (so XRANGE and XREAD address offsets directly), beside a hash of its
// fences (step → newest attempt begun) and its next offset (field ''). Both keys carry the
// instance id as their hash tag: one slot per instance stream, spread over a cluster, and an append
// (one Lua script over the two keys) is atomic there. Tails wait with XREAD BLOCK on connections
// of their own.

/** The stream keys of a store's instance: the store prefix with brackets for braces, then `stream:{id}`. */
export function streamKeysOf(prefix: string, instance: string): [stream: string, fences: string] {
  const base = `${flowPrefixOf(prefix)}stream:{${instance}}`;
  return [`${base}:s`, `${base}:f`];
}

/** Connections a tail blocks on with XREAD, kept for the next tail (a few idle at most). */
function blockingConnections(client: Redis | Cluster) {
  const idle: Array<Redis | Cluster> = [];
  const open = new Set<Redis | Cluster>();
  return {
    take(): Redis | Cluster {
      const kept = idle.pop();
      if (kept) return kept;
      const conn = client.duplicate();
      conn.on('error', () => {}); // a failed XREAD rejects; the tail then polls
      open.add(conn);
      return conn;
    },
    give(conn: Redis | Cluster, broken: boolean) {
      if (!broken && idle.length < 4) idle.push(conn);
      else {
        open.delete(conn);
        conn.disconnect();
      }
    },
    closeAll() {
      for (const conn of open) conn.disconnect();
      open.clear();
      idle.length = 0;
    },
  };
}

type Reply = [Array<[string, string[]]>, string[]];

/** Stream entries as Redis gives them (id `0-<offset + 1>`, fields s, a and d), as the driver's. */
function entriesOf(rows: ReadonlyArray<[string, string[]]>): StoredStreamEntry[] {
  return rows.map(([id, fields]) => {
    const f = new Map<string, string>();
    for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!, fields[i + 1]!);
    return {
      offset: Number(id.slice(2)) - 1,
      step: f.get('s')!,
      attempt: Number(f.get('a')),
      data: f.get('d') ?? null,
    };
  });
}

/** The stream driver on `client` under `prefix`, and the end of its tails' connections. */
export function redisStream(client: Redis | Cluster, prefix: string): StreamDriver & { closeAll(): void } {
  const blocking = blockingConnections(client);
  return {
    async append(instance, step, attempt, chunks) {
      const keys = streamKeysOf(prefix, instance);
      const [ok, n] = (await runScript(client, APPEND_STREAM, keys, [step, attempt, ...chunks])) as [
        number,
        number,
      ];
      return ok === 1 ? Number(n) : { fenced: Number(n) };
    },
    async read(instance, from, limit) {
      const keys = streamKeysOf(prefix, instance);
      const [rows, pairs] = (await runScript(client, READ_STREAM, keys, [from, limit])) as Reply;
      const entries = entriesOf(rows);
      const fences = new Map<string, number>();
      for (let i = 0; i + 1 < pairs.length; i += 2)
        if (pairs[i] !== '') fences.set(pairs[i]!, Number(pairs[i + 1]));
      return { entries, fences: Object.fromEntries(fences) };
    },
    async remove(instance) {
      await client.del(...streamKeysOf(prefix, instance));
    },
    async wait(instance, next, ms, signal) {
      if (signal?.aborted) return;
      const conn = blocking.take();
      const abort = () => conn.disconnect();
      signal?.addEventListener('abort', abort, { once: true });
      let broken = false;
      try {
        // XREAD answers with the new entries: the tail yields them without a read of its own.
        const r = (await conn.xread(
          'BLOCK',
          ms,
          'STREAMS',
          streamKeysOf(prefix, instance)[0],
          `0-${next}`,
        )) as Array<[string, Array<[string, string[]]>]> | null;
        return r?.[0] ? entriesOf(r[0][1]) : undefined;
      } catch (e) {
        broken = true;
        if (!signal?.aborted) throw e;
      } finally {
        signal?.removeEventListener('abort', abort);
        blocking.give(conn, broken || signal?.aborted === true);
      }
    },
    closeAll: () => blocking.closeAll(),
  };
}
