import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composition, createRunner, type Store, type StreamEntry, type StreamStore } from '@stepfold/engine';
import { createPostgresStore } from '@stepfold/store-postgres';
import { createRedisStore } from '@stepfold/store-redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { decideToolCall, type ModelTurn, pendingToolCalls, sendMessage } from '../src/index.js';
import {
  agent,
  CANCEL_CALL,
  FINAL_TEXT,
  FIRST_TEXT,
  LEASE_MS,
  LOOKUP_CALL,
  toolCall,
} from './fixtures/agent-worker.mjs';

// An agent turn survives SIGKILLed workers. One worker process at a time runs a turn that streams
// a model response and calls two tools (the cancel behind approval): the first is killed while the
// model streams, the second right after the lookup tool's result is stored, and a third finishes
// the turn once the cancel is approved. The worker processes log every model call and every tool
// run to a file. A reader tails the stream, stops mid-answer and reconnects from its last offset.

const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';
const REDIS_URL = process.env.STEPFOLD_REDIS_URL ?? 'redis://127.0.0.1:6379';
const tag = `agent_kill_${process.pid}`;

interface Case {
  name: 'postgres' | 'redis';
  url: string;
  namespace: string;
  open(): { store: Store; close(): Promise<void> };
}

const cases: Case[] = [
  {
    name: 'postgres',
    url: PG_URL,
    namespace: tag,
    open() {
      const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
      const store = createPostgresStore({ pool, schema: tag });
      return {
        store,
        close: async () => {
          await store.close();
          await pool.end();
        },
      };
    },
  },
  {
    name: 'redis',
    url: REDIS_URL,
    namespace: `stepfold:{${tag}}:`,
    open() {
      const client = new Redis(REDIS_URL);
      const store = createRedisStore({ client, prefix: `stepfold:{${tag}}:` });
      return {
        store,
        close: async () => {
          await store.close();
          client.disconnect();
        },
      };
    },
  },
];

const logDir = mkdtempSync(join(tmpdir(), 'stepfold-agent-kill-'));

function spawnWorker(c: Case, log: string, stall: boolean): ChildProcess {
  return fork(new URL('./fixtures/agent-worker.mjs', import.meta.url), [], {
    env: {
      ...process.env,
      AGENT_STORE: c.name,
      AGENT_URL: c.url,
      AGENT_NS: c.namespace,
      AGENT_LOG: log,
      AGENT_STALL: stall ? '1' : '0',
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** The next IPC message from `child` that has `key` (and passes `when`). */
function next<T>(child: ChildProcess, key: string, when: (m: T) => boolean = () => true): Promise<T> {
  return new Promise((resolve, reject) => {
    const on = (m: Record<string, unknown>) => {
      if (!(key in m) || !when(m as T)) return;
      child.off('message', on);
      resolve(m as T);
    };
    child.on('message', on);
    child.once('exit', (code, signal) =>
      reject(new Error(`worker process exited (${code ?? signal}) before sending ${key}`)),
    );
  });
}

async function kill(child: ChildProcess): Promise<void> {
  child.kill('SIGKILL');
  if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
}

/** Tails `id`'s stream from `from` into `into` until `done` says so (or `stop` aborts, or a minute passes). */
async function tailUntil(
  stream: StreamStore,
  id: string,
  from: number,
  into: StreamEntry[],
  done: (entry: StreamEntry) => boolean,
  stop: AbortSignal,
): Promise<void> {
  const signal = AbortSignal.any([stop, AbortSignal.timeout(60_000)]);
  for await (const entry of stream.tail(id, { from, signal })) {
    into.push(entry);
    if (done(entry)) return;
  }
  throw new Error(`the stream of ${id} ended without the entry the reader waits for`);
}

const chunk = (e: StreamEntry) =>
  e.type === 'chunk' ? (e.data as { type: string; [k: string]: unknown }) : undefined;
const textOf = (entries: StreamEntry[]) =>
  entries
    .map((e) => chunk(e))
    .flatMap((c) => (c?.type === 'text-delta' ? [String(c['delta'])] : []))
    .join('');
const isModelChunk = (e: StreamEntry, attempt: number) =>
  e.type === 'chunk' && e.step === 'model' && e.attempt === attempt;

afterAll(async () => {
  rmSync(logDir, { recursive: true, force: true });
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS "${tag}" CASCADE`);
  await admin.end();
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`stepfold:{${tag}}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
});

describe('an agent turn whose workers are SIGKILLed mid-stream and right after a tool result', () => {
  for (const c of cases) {
    it(`${c.name}: runs each tool call once, completes the turn, and a reader that reconnects sees a reset and then the whole answer`, async () => {
      const { store, close } = c.open();
      await store.setup();
      const log = join(logDir, `${c.name}.ndjson`);
      const id = `chat-${c.name}`;
      const workers: ChildProcess[] = [];
      const stopReading = new AbortController();
      const start = async (stall: boolean) => {
        const w = spawnWorker(c, log, stall);
        workers.push(w);
        await next(w, 'ready');
        return w;
      };
      try {
        // This process only writes: the work is handed off to the one worker process up.
        const api = createRunner({
          store,
          workflows: [agent, toolCall],
          kinds: [composition],
          execute: false,
          taskLeaseMs: LEASE_MS,
        });
        const first = await start(true);
        await sendMessage(
          api,
          'support',
          id,
          { id: 'm1', text: 'Cancel order 7, please.' },
          { wait: 'write' },
        );

        // Kill 1: mid-stream. The reader stops after three words of the first attempt.
        const before: StreamEntry[] = [];
        await tailUntil(
          store.stream!,
          id,
          0,
          before,
          () => before.filter((e) => isModelChunk(e, 1) && chunk(e)?.type === 'text-delta').length >= 3,
          stopReading.signal,
        );
        const second = await start(false);
        await kill(first);

        // The reader reconnects from its last offset, and reads on to the end of the turn.
        const after: StreamEntry[] = [];
        const reading = tailUntil(
          store.stream!,
          id,
          before.at(-1)!.offset + 1,
          after,
          (e) => chunk(e)?.type === 'finish',
          stopReading.signal,
        );

        // Kill 2: right after the lookup's result is stored (its child instance completed).
        const settling = await next<{ settling: string; child: string }>(
          second,
          'settling',
          (m) => m.settling === LOOKUP_CALL,
        );
        await expect
          .poll(async () => (await store.load(settling.child))?.status, { timeout: 10_000, interval: 5 })
          .toBe('completed');
        await kill(second);
        await start(false);

        // The cancel waits for approval (and only it: the lookup settled before the kill).
        await expect
          .poll(async () => (await pendingToolCalls(api, id)).map((p) => `${p.toolCallId} ${p.approval}`), {
            timeout: 20_000,
            interval: 100,
          })
          .toEqual([`${CANCEL_CALL} true`]);
        await decideToolCall(api, id, CANCEL_CALL, { decision: 'approve' }, { wait: 'write' });
        await reading;

        // The turn completed: the model answered, nothing waits.
        await expect
          .poll(async () => ((await api.get(id))?.steps['model']?.output as ModelTurn | undefined)?.status, {
            timeout: 10_000,
            interval: 100,
          })
          .toBe('answered');
        const s = (await api.get(id))!;
        expect((s.steps['model']!.output as ModelTurn).text).toBe(FINAL_TEXT);
        expect(await pendingToolCalls(api, id)).toEqual([]);

        // Every tool call ran exactly once; the first model call ran again once (its kill), the second once.
        const lines = readFileSync(log, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { model?: number; tool?: string; pid: number });
        expect(
          lines
            .filter((l) => l.tool)
            .map((l) => l.tool)
            .sort(),
        ).toEqual([CANCEL_CALL, LOOKUP_CALL].sort());
        const modelCalls = lines.filter((l) => l.model !== undefined);
        expect(modelCalls.map((l) => l.model)).toEqual([1, 1, 2]);
        expect(modelCalls.map((l) => l.pid)).toEqual(workers.map((w) => w.pid));

        // The reader: the superseded attempt's words, then its reset, then all of the final attempt.
        expect(before.every((e) => e.type === 'chunk' && e.step === 'model' && e.attempt === 1)).toBe(true);
        const reset = after.findIndex((e) => e.type === 'reset');
        expect(after[reset]).toMatchObject({ type: 'reset', step: 'model', attempt: 2 });
        expect(after.slice(0, reset).every((e) => isModelChunk(e, 1))).toBe(true);
        const rest = after.slice(reset + 1);
        expect(rest.some((e) => isModelChunk(e, 1) || e.type === 'reset')).toBe(false);
        const offsets = [...before, ...after].map((e) => e.offset);
        expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
        expect(new Set(offsets).size).toBe(offsets.length);
        const outputs = rest.flatMap((e) =>
          chunk(e)?.type === 'tool-output-available' ? [chunk(e)?.['toolCallId']] : [],
        );
        expect(outputs.sort()).toEqual([CANCEL_CALL, LOOKUP_CALL].sort());
        const lastOutput = rest.map((e) => chunk(e)?.type).lastIndexOf('tool-output-available');
        expect(textOf(rest.slice(0, lastOutput))).toBe(FIRST_TEXT);
        expect(textOf(rest.slice(lastOutput))).toBe(FINAL_TEXT);
        expect(chunk(rest.at(-1)!)?.type).toBe('finish');

        // Read again from 0, the stream holds the final attempts only.
        const all = (await store.stream!.read(id)).entries;
        expect(all.some((e) => isModelChunk(e, 1) && chunk(e)?.type === 'text-delta')).toBe(false);
        expect(textOf(all)).toBe(FIRST_TEXT + FINAL_TEXT);
      } finally {
        stopReading.abort();
        for (const w of workers) {
          if (w.exitCode !== null || w.signalCode !== null) continue;
          w.send('stop');
          await once(w, 'exit');
        }
        await close();
      }
    }, 90_000);
  }
});
