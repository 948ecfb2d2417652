import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composition, createRunner, type StreamEntry, type StreamStore } from '@stepfold/engine';
import { afterAll, describe, expect, it } from 'vitest';
import { openTestStore, type TestStore, type TestStoreName } from '../../node/test/support/test-stores.js';
import { workerSet } from '../../node/test/support/worker-process.js';
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

const tag = `agent_kill_${process.pid}`;
const logDir = mkdtempSync(join(tmpdir(), 'stepfold-agent-kill-'));

const WORKER = new URL('./fixtures/agent-worker.mjs', import.meta.url);

/** The environment of a worker process: its store, its side-effect log, and whether its first answer stalls. */
const workerEnv = (db: TestStore, log: string, stall: boolean) => ({
  AGENT_STORE: db.name,
  AGENT_URL: db.url,
  AGENT_NS: db.namespace,
  AGENT_LOG: log,
  AGENT_STALL: stall ? '1' : '0',
});

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

const opened: TestStore[] = [];
afterAll(async () => {
  rmSync(logDir, { recursive: true, force: true });
  for (const db of opened) await db.drop();
});

describe('an agent turn whose workers are SIGKILLed mid-stream and right after a tool result', () => {
  for (const name of ['postgres', 'redis'] as TestStoreName[]) {
    it(`${name}: runs each tool call once, completes the turn, and a reader that reconnects sees a reset and then the whole answer`, async () => {
      const db = openTestStore(name, tag, { poolMax: 4 });
      opened.push(db);
      const { store } = db;
      await store.setup();
      const log = join(logDir, `${name}.ndjson`);
      const id = `chat-${name}`;
      const workers = workerSet();
      const stopReading = new AbortController();
      const start = (stall: boolean) => workers.start(WORKER, workerEnv(db, log, stall));
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
        await first.kill();

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
        const settling = await second.next<{ settling: string; child: string }>(
          'settling',
          (m) => m.settling === LOOKUP_CALL,
        );
        await expect
          .poll(async () => (await store.load(settling.child))?.status, { timeout: 10_000, interval: 5 })
          .toBe('completed');
        await second.kill();
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
        expect(modelCalls.map((l) => l.pid)).toEqual(workers.all.map((w) => w.pid));

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
        await workers.stopAll();
      }
    }, 90_000);
  }
});
