import type { StreamStore } from '@stepfold/engine';
import { createPostgresStore } from '@stepfold/store-postgres';
import { createRedisStore } from '@stepfold/store-redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { BENCH_DB, ensurePgDatabase, pgDatabaseUrl } from '../backends.js';
import { compareAsync, median } from '../measure.js';
import { costRow, type Group, type Row, rateRow } from '../row.js';
import { serviceUrls } from '../services.js';

// The stream capability (`store.stream`) against the same server used by hand, side by side:
// - `stream-<store>`: chunks/s a step attempt streams through the store's batching writer (1,000
//   small chunks written at once, then `flush`: batches of 256, one append at a time, as the
//   writer chains them) against the same chunks appended raw in the same batches (PostgreSQL: one
//   plain multi-row INSERT into a table of the same shape; Redis: a pipeline of XADDs), rounds alternating.
// - `stream-<store>-tail-p99`: ms from an append of one chunk to a tail reader (`store.stream.tail`)
//   holding it, against a raw reader (PostgreSQL: an INSERT with pg_notify, a LISTEN connection,
//   then a SELECT of the new rows; Redis: XADD and a reader blocked in XREAD), one chunk at a time,
//   rounds of each alternating (ABBA). Both rows are ratios where higher is better.

const CHUNKS = 1_000;
const BATCH = 256;
const CHUNK = (i: number) => ({ t: `token ${i} `, i });
const LATENCY_ROUNDS = 4;
const LATENCY_SAMPLES = 100;
/** Ours at most 1.5 × the raw reader's p99, as a ratio where higher is better (raw / ours). */
const TAIL_GOAL = 0.67;

/** What one store contributes: our stream, and the same server written and read by hand. */
interface Contender {
  stream: StreamStore;
  /** Appends `chunks` raw, in batches of {@link BATCH}, one after another. */
  rawAppend(stream: string, from: number, chunks: readonly unknown[]): Promise<void>;
  /** A raw reader of `stream`: `send` appends one chunk, `received` resolves once the reader holds it. */
  rawReader(
    stream: string,
  ): Promise<{ send(i: number): Promise<void>; received(i: number): Promise<void>; close(): Promise<void> }>;
  close(): Promise<void>;
  /** The server, for the notes. */
  server: string;
  /** What the raw appends are, for the throughput row's note. */
  rawAppends: string;
  /** What the raw reader is, for the latency row's note. */
  rawReads: string;
}

/** Resolvers by chunk index: the reader side resolves what the sender side awaits. */
class Arrivals {
  private readonly waiting = new Map<number, () => void>();
  private readonly early = new Set<number>();
  wait(i: number): Promise<void> {
    if (this.early.delete(i)) return Promise.resolve();
    return new Promise((resolve) => this.waiting.set(i, resolve));
  }
  arrived(i: number): void {
    const r = this.waiting.get(i);
    if (r) {
      this.waiting.delete(i);
      r();
    } else this.early.add(i);
  }
}

async function postgres(): Promise<Contender> {
  const urls = serviceUrls();
  await ensurePgDatabase(urls.pg, BENCH_DB);
  const url = pgDatabaseUrl(urls.pg, BENCH_DB);
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  const store = createPostgresStore({ pool, schema: 'stepfold_stream_bench' });
  await store.setup();
  await pool.query(`CREATE TABLE IF NOT EXISTS stepfold_stream_bench.raw_chunk (
    instance text COLLATE "C" NOT NULL, seq bigint NOT NULL, step text NOT NULL, attempt bigint NOT NULL,
    data text, PRIMARY KEY (instance, seq))`);
  const INSERT = `INSERT INTO stepfold_stream_bench.raw_chunk (instance, seq, step, attempt, data)
    SELECT $1, $2 + c.ord - 1, 'gen', 1, c.data FROM unnest($3::text[]) WITH ORDINALITY AS c(data, ord)`;
  const INSERT_NOTIFY = `WITH ins AS (INSERT INTO stepfold_stream_bench.raw_chunk (instance, seq, step, attempt, data)
    VALUES ($1, $2, 'gen', 1, $3) RETURNING seq) SELECT pg_notify('raw_stream_bench', $1) FROM ins`;
  return {
    stream: store.stream!,
    server: 'PostgreSQL',
    rawAppends: 'a multi-row INSERT (unnest) per batch into a table of the same shape',
    rawReads: 'an INSERT with pg_notify, a LISTEN connection, then a SELECT of the new rows',
    async rawAppend(stream, from, chunks) {
      for (let at = 0; at < chunks.length; at += BATCH) {
        const batch = chunks.slice(at, at + BATCH).map((c) => JSON.stringify(c));
        await pool.query({ name: 'bench_raw_chunks', text: INSERT, values: [stream, from + at, batch] });
      }
    },
    async rawReader(stream) {
      const listener = new pg.Client({ connectionString: url });
      await listener.connect();
      const arrivals = new Arrivals();
      let next = 0;
      let reading = Promise.resolve();
      // Each notice: read the new rows, as a hand-written tail would.
      listener.on('notification', () => {
        reading = reading.then(async () => {
          const r = await pool.query<{ seq: string; data: string }>(
            'SELECT seq, data FROM stepfold_stream_bench.raw_chunk WHERE instance = $1 AND seq >= $2 ORDER BY seq',
            [stream, next],
          );
          for (const row of r.rows) {
            next = Number(row.seq) + 1;
            arrivals.arrived((JSON.parse(row.data) as { i: number }).i);
          }
        });
      });
      await listener.query('LISTEN raw_stream_bench');
      return {
        async send(i) {
          await pool.query({
            name: 'bench_raw_notify',
            text: INSERT_NOTIFY,
            values: [stream, i, JSON.stringify(CHUNK(i))],
          });
        },
        received: (i) => arrivals.wait(i),
        async close() {
          await reading;
          await listener.end();
        },
      };
    },
    async close() {
      await store.close();
      await pool.query('DROP SCHEMA IF EXISTS stepfold_stream_bench CASCADE');
      await pool.end();
    },
  };
}

async function redis(): Promise<Contender> {
  const { redis: url } = serviceUrls();
  const client = new Redis(url);
  const prefix = 'stepfold-bench:{stream}:';
  const store = createRedisStore({ client, prefix });
  await store.setup();
  const rawKey = (s: string) => `${prefix}raw:${s}`;
  return {
    stream: store.stream!,
    server: 'Redis',
    rawAppends: 'a pipeline of XADDs per batch to a plain stream key',
    rawReads: 'XADD to a plain stream key, a reader blocked in XREAD BLOCK',
    async rawAppend(stream, _from, chunks) {
      for (let at = 0; at < chunks.length; at += BATCH) {
        const p = client.pipeline();
        for (const c of chunks.slice(at, at + BATCH)) p.xadd(rawKey(stream), '*', 'd', JSON.stringify(c));
        await p.exec();
      }
    },
    async rawReader(stream) {
      const reader = new Redis(url);
      const arrivals = new Arrivals();
      let open = true;
      let last = '$';
      const loop = (async () => {
        while (open) {
          const r = (await reader.xread('BLOCK', 1000, 'STREAMS', rawKey(stream), last)) as unknown as Array<
            [string, Array<[string, string[]]>]
          > | null;
          for (const [, entries] of r ?? [])
            for (const [id, fields] of entries) {
              last = id;
              arrivals.arrived((JSON.parse(fields[1]!) as { i: number }).i);
            }
        }
      })();
      // The reader is blocked before the first send.
      await new Promise((r) => setTimeout(r, 50));
      return {
        async send(i) {
          await client.xadd(rawKey(stream), '*', 'd', JSON.stringify(CHUNK(i)));
        },
        received: (i) => arrivals.wait(i),
        async close() {
          open = false;
          await loop;
          reader.disconnect();
        },
      };
    },
    async close() {
      await store.close();
      const keys = await client.keys(`${prefix}*`);
      if (keys.length) await client.del(...keys);
      client.disconnect();
    },
  };
}

/** Chunks/s through the writer against raw appends of the same batches. */
async function throughput(name: string, c: Contender): Promise<Row> {
  const chunks = Array.from({ length: CHUNKS }, (_, i) => CHUNK(i));
  let n = 0;
  const [ours, raw] = await compareAsync(
    async () => {
      const id = `tp-ours-${process.pid}-${n++}`;
      const w = c.stream.writer(id, 'gen', 1);
      for (const chunk of chunks) w.write(chunk);
      await w.close();
    },
    async () => {
      await c.rawAppend(`tp-raw-${process.pid}-${n++}`, 0, chunks);
    },
    { warmupMs: 500, sampleMs: 500, samples: 8 },
  );
  return rateRow(`stream-${name}`, ours.hz * CHUNKS, raw.hz * CHUNKS, 'chunks/s', 0.7, {
    note: `${c.server}; ${CHUNKS} chunks of ~25 B per sample, written at once then flushed (writer batches of ${BATCH}); raw: ${c.rawAppends}`,
    details: {
      oursSamples: ours.samples.map((x) => Math.round(x * CHUNKS)),
      rawSamples: raw.samples.map((x) => Math.round(x * CHUNKS)),
    },
  });
}

const p99 = (xs: readonly number[]) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))]!;

/** One round of `LATENCY_SAMPLES` appends, each awaited at its reader before the next: ms each. */
async function round(
  send: (i: number) => Promise<void>,
  received: (i: number) => Promise<void>,
): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    const got = received(i);
    const t0 = performance.now();
    await send(i);
    await got;
    ms.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 2));
  }
  return ms;
}

/** Append → tail reader p99 of ours against the raw reader, rounds alternating ABBA. */
async function latency(name: string, c: Contender): Promise<Row> {
  const ours: number[] = [];
  const raw: number[] = [];
  const oursRound = async (r: number) => {
    const id = `lat-ours-${process.pid}-${r}`;
    const abort = new AbortController();
    const arrivals = new Arrivals();
    const reading = (async () => {
      for await (const e of c.stream.tail(id, { signal: abort.signal }))
        if (e.type === 'chunk') arrivals.arrived((e.data as { i: number }).i);
    })().catch(() => {});
    await new Promise((r) => setTimeout(r, 50));
    ours.push(
      ...(await round(
        async (i) => {
          await c.stream.append(id, 'gen', 1, [CHUNK(i)]);
        },
        (i) => arrivals.wait(i),
      )),
    );
    abort.abort();
    await reading;
    await c.stream.remove(id);
  };
  const rawRound = async (r: number) => {
    const reader = await c.rawReader(`lat-raw-${process.pid}-${r}`);
    raw.push(...(await round(reader.send, reader.received)));
    await reader.close();
  };
  for (let r = 0; r < LATENCY_ROUNDS; r++) {
    if (r % 2 === 0) {
      await oursRound(r);
      await rawRound(r);
    } else {
      await rawRound(r);
      await oursRound(r);
    }
  }
  return costRow(`stream-${name}-tail-p99`, p99(ours), p99(raw), 'ms', TAIL_GOAL, {
    note: `${c.server}; append of one chunk → the tail reader holding it, ${LATENCY_ROUNDS} rounds of ${LATENCY_SAMPLES} each side (ABBA); raw: ${c.rawReads}; ratio = raw p99 / ours (goal: ours ≤ 1.5 × raw)`,
    details: {
      oursP50: median(ours),
      rawP50: median(raw),
      oursMs: ours.map((x) => Math.round(x * 100) / 100),
      rawMs: raw.map((x) => Math.round(x * 100) / 100),
    },
  });
}

function streamGroup(name: 'postgres' | 'redis', open: () => Promise<Contender>): Group {
  return {
    name: `stream-${name}`,
    async run() {
      let c: Contender;
      try {
        c = await open();
      } catch (e) {
        const note = `not measured: ${e instanceof Error ? e.message : String(e)}; run \`pnpm services\``;
        return [
          { ...rateRow(`stream-${name}`, null, null, 'chunks/s', 0.7), note },
          { ...costRow(`stream-${name}-tail-p99`, null, null, 'ms', TAIL_GOAL), note },
        ];
      }
      try {
        return [await throughput(name, c), await latency(name, c)];
      } finally {
        await c.close();
      }
    },
  };
}

/** `stream-postgres` and `stream-redis`: the stream capability against the same server by hand. */
export const streamGroups: Group[] = [streamGroup('postgres', postgres), streamGroup('redis', redis)];
