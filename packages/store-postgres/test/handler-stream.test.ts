import {
  createRunner,
  type HandlerContext,
  isStepfoldError,
  type StreamEntry,
  TaskError,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import type { PostgresStore } from '../src/index.js';
import { useTestTables } from './test-tables.js';

// `ctx.stream` over the PostgreSQL stream tables: what the memory store's tests show, on a real server.

const { store: open } = useTestTables('hs');

const reply = workflow('reply', 1)
  .task('answer', { handler: 'answer', retry: { maxAttempts: 3, initialMs: 1, jitter: 0 } })
  .build();

async function entries(store: PostgresStore, id: string): Promise<string[]> {
  const page = await store.stream!.read(id);
  return page.entries.map((e: StreamEntry) =>
    e.type === 'reset' ? `reset ${e.step}@${e.attempt}` : `${e.step}@${e.attempt}:${String(e.data)}`,
  );
}

async function settle(
  runner: { get(id: string): Promise<{ status: string } | null>; processDue(now: number): Promise<unknown> },
  id: string,
) {
  let s = await runner.get(id);
  for (let i = 0; i < 100 && s?.status !== 'completed' && s?.status !== 'failed'; i++) {
    await new Promise((r) => setTimeout(r, 10));
    await runner.processDue(Date.now());
    s = await runner.get(id);
  }
  return s;
}

describe('ctx.stream on PostgreSQL', () => {
  it('stores the chunks before the result, and a retry drops the failed attempt’s chunks for readers', async () => {
    const store = await open();
    const runner = createRunner({
      store,
      workflows: [reply],
      handlers: {
        answer: ({ stream, attempt }: HandlerContext) => {
          stream.write(`try ${attempt}`);
          if (attempt === 1) throw new TaskError('connection reset');
          stream.write('done');
          return { ok: true };
        },
      },
    });
    await runner.start('reply', 'pg-hs-1');
    const s = await settle(runner, 'pg-hs-1');
    expect(s?.status).toBe('completed');
    expect(await entries(store, 'pg-hs-1')).toEqual(['reset answer@2', 'answer@2:try 2', 'answer@2:done']);
  });

  it('fences a zombie attempt with STREAM_FENCED and still writes its (stale) result without crashing', async () => {
    const store = await open();
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let fenced: unknown;
    const runner = createRunner({
      store,
      workflows: [reply],
      handlers: {
        answer: async ({ stream }: HandlerContext) => {
          stream.write('first');
          await stream.flush();
          await gate;
          stream.write('zombie');
          await stream.flush().catch((e: unknown) => {
            fenced = e;
          });
          return { ok: true };
        },
      },
    });
    const started = runner.start('reply', 'pg-hs-2');
    while ((await store.stream!.read('pg-hs-2')).entries.length === 0)
      await new Promise((r) => setTimeout(r, 5));
    await store.stream!.begin('pg-hs-2', 'answer', 2);
    release();
    await started;
    expect(isStepfoldError(fenced, 'STREAM_FENCED')).toBe(true);
    expect(await entries(store, 'pg-hs-2')).toEqual(['reset answer@2']);
  });
});
