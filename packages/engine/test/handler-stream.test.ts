import {
  attemptStream,
  composition,
  createHarness,
  createMemoryStore,
  createRunner,
  type DefinitionInput,
  type HandlerContext,
  isStepfoldError,
  type Store,
  type StreamEntry,
  TaskError,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

const reply = workflow('reply', 1)
  .task('answer', { handler: 'answer', retry: { maxAttempts: 3, initialMs: 1, jitter: 0 } })
  .build();

async function entries(store: Store, id: string): Promise<string[]> {
  const page = await store.stream!.read(id);
  return page.entries.map((e: StreamEntry) =>
    e.type === 'reset' ? `reset ${e.step}@${e.attempt}` : `${e.step}@${e.attempt}:${String(e.data)}`,
  );
}

describe('ctx.stream: handlers write to the instance stream', () => {
  it('stores the chunks a handler wrote before its result is written, in order', async () => {
    const store = createMemoryStore();
    let atResult: Promise<string[]> | undefined;
    const runner = createRunner({
      store,
      workflows: [reply],
      handlers: {
        answer: ({ stream }: HandlerContext) => {
          for (const word of ['Hel', 'lo', ' world']) stream.write(word);
          return { text: 'Hello world' };
        },
      },
      // Read as the result is written: a chunk still waiting in a batch would be missing.
      onWritten: (s) => {
        if (s.status === 'completed') atResult = entries(store, s.id);
      },
    });
    const done = await runner.start('reply', 'r-1');
    expect(done.status).toBe('completed');
    expect(await atResult).toEqual(['answer@1:Hel', 'answer@1:lo', 'answer@1: world']);
    // The snapshot holds the result only: chunks never enter it.
    expect(JSON.stringify(done)).not.toContain('Hel"');
  });

  it("drops a failed attempt's chunks for readers once the retry begins, even if the retry writes nothing", async () => {
    const store = createMemoryStore();
    const runner = createRunner({
      store,
      workflows: [reply],
      handlers: {
        answer: ({ stream, attempt }: HandlerContext) => {
          if (attempt === 1) {
            stream.write('half an ans');
            throw new TaskError('model dropped the connection');
          }
          return { text: 'fine' };
        },
      },
    });
    await runner.start('reply', 'r-2');
    let s = await runner.get('r-2');
    for (let i = 0; i < 50 && s?.status !== 'completed'; i++) {
      await new Promise((r) => setTimeout(r, 5));
      await runner.processDue(Date.now());
      s = await runner.get('r-2');
    }
    expect(s?.status).toBe('completed');
    expect(await entries(store, 'r-2')).toEqual(['reset answer@2']);
  });

  it('fences a zombie attempt: its writes end with STREAM_FENCED, its handler and the process go on', async () => {
    const store = createMemoryStore();
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
          stream.write('before');
          await stream.flush();
          await gate;
          stream.write('after');
          try {
            await stream.flush();
          } catch (e) {
            fenced = e;
          }
          try {
            stream.write('again');
          } catch (e) {
            fenced ??= e;
          }
          return { text: 'late' };
        },
      },
    });
    const started = runner.start('reply', 'r-3');
    while ((await store.stream!.read('r-3')).entries.length === 0) await new Promise((r) => setTimeout(r, 2));
    // Another worker took over as attempt 2 (this one was presumed dead).
    await store.stream!.begin('r-3', 'answer', 2);
    release();
    await started;
    expect(isStepfoldError(fenced, 'STREAM_FENCED')).toBe(true);
    expect(await entries(store, 'r-3')).toEqual(['reset answer@2']);
  });

  it('fails the attempt with STREAM_UNSUPPORTED when the store has no stream', async () => {
    const store: Store = { ...createMemoryStore(), stream: undefined };
    const runner = createRunner({
      store,
      workflows: [reply],
      handlers: {
        answer: ({ stream }: HandlerContext) => {
          stream.write('token');
          return null;
        },
      },
    });
    await runner.start('reply', 'r-4');
    const s = await runner.get('r-4');
    expect(s?.status).toBe('failed');
    expect(s?.steps.answer?.error?.code).toBe('STREAM_UNSUPPORTED');
  });

  it("fails the attempt with STREAM_UNSUPPORTED when the store's stream makes no attempts; attemptStream gives it them", async () => {
    const memory = createMemoryStore();
    const stream = memory.stream!;
    const handlers = {
      answer: ({ stream: out }: HandlerContext) => {
        out.write('token');
        return null;
      },
    };
    // A hand-written stream without `attempt`: the runner cannot stream through it.
    const { attempt: _, ...withoutAttempt } = stream;
    const bare: Store = { ...memory, stream: withoutAttempt };
    await createRunner({ store: bare, workflows: [reply], handlers }).start('reply', 'r-5');
    expect((await bare.load('r-5'))?.steps.answer?.error?.code).toBe('STREAM_UNSUPPORTED');
    // The same stream given attempts by the store kit's helper streams as defineStore's does.
    const given: Store = {
      ...memory,
      stream: { ...stream, attempt: (i, step, a) => attemptStream(given.stream!, i, step, a) },
    };
    const done = await createRunner({ store: given, workflows: [reply], handlers }).start('reply', 'r-6');
    expect(done.status).toBe('completed');
    expect(await entries(given, 'r-6')).toEqual(['answer@1:token']);
  });

  it("asks the store's stream for a first attempt's side only when the handler reads ctx.stream; a retry's at once", async () => {
    const memory = createMemoryStore();
    const stream = memory.stream!;
    const asked: string[] = [];
    const store: Store = {
      ...memory,
      stream: {
        ...stream,
        attempt: (i, step, a) => {
          asked.push(`${i} ${step}@${a}`);
          return stream.attempt!(i, step, a);
        },
      },
    };
    const runner = createRunner({
      store,
      workflows: [reply],
      handlers: {
        // Only r-9's handler reads ctx.stream (destructuring it would read it).
        answer: (ctx: HandlerContext) => {
          if (ctx.instanceId === 'r-8' && ctx.attempt === 1)
            throw new TaskError('again', { retryable: true });
          if (ctx.instanceId === 'r-9') ctx.stream.write('token');
          return null;
        },
      },
    });
    // Untouched: no attempt asked for.
    expect((await runner.start('reply', 'r-7')).status).toBe('completed');
    expect(asked).toEqual([]);
    // A retry begins at once, its handler untouched too; the first attempt asked for none.
    await runner.start('reply', 'r-8');
    for (let i = 0; i < 50 && (await runner.get('r-8'))?.status !== 'completed'; i++) {
      await new Promise((r) => setTimeout(r, 5));
      await runner.processDue(Date.now());
    }
    expect((await runner.get('r-8'))?.status).toBe('completed');
    expect(asked).toEqual(['r-8 answer@2']);
    expect(await entries(store, 'r-8')).toEqual(['reset answer@2']);
    // Read by the handler: asked for then, and its chunks stored before the result.
    expect((await runner.start('reply', 'r-9')).status).toBe('completed');
    expect(asked).toEqual(['r-8 answer@2', 'r-9 answer@1']);
    expect(await entries(store, 'r-9')).toEqual(['answer@1:token']);
  });

  it('gives each map item a stream key of its own, so one item retrying does not fence another', async () => {
    const store = createMemoryStore();
    const fanOut = workflow('fan', 1)
      .map('each', {
        items: 'input.words',
        handler: 'say',
        retry: { maxAttempts: 2, initialMs: 1, jitter: 0 },
      })
      .build();
    const runner = createRunner({
      store,
      workflows: [fanOut],
      kinds: [composition],
      handlers: {
        say: ({ input, attempt, stream }: HandlerContext<string>) => {
          stream.write(`${input}#${attempt}`);
          if (input === 'b' && attempt === 1) throw new TaskError('flaky');
          return input;
        },
      },
    });
    await runner.start('fan', 'f-1', { words: ['a', 'b'] });
    let s = await runner.get('f-1');
    for (let i = 0; i < 50 && s?.status !== 'completed'; i++) {
      await new Promise((r) => setTimeout(r, 5));
      await runner.processDue(Date.now());
      s = await runner.get('f-1');
    }
    expect(s?.status).toBe('completed');
    expect(await entries(store, 'f-1')).toEqual(['each[0]@1:a#1', 'reset each[1]@2', 'each[1]@2:b#2']);
  });

  it("streams a step entered again (a loop, a later run) after an earlier pass's retry: that retry does not fence it", async () => {
    const store = createMemoryStore();
    // A step entered twice per run, and two runs: attempts count from 1 again at each entry.
    const rounds: DefinitionInput = {
      name: 'rounds',
      version: 1,
      start: 'answer',
      steps: {
        answer: {
          kind: 'task',
          handler: 'answer',
          retry: { maxAttempts: 2, initialMs: 1, jitter: 0 },
          next: 'again',
        },
        again: {
          kind: 'choice',
          branches: [
            { when: { '<': [{ var: 'outputs.answer.iteration' }, 2] }, next: 'pause' },
            { when: { '==': [{ var: 'input.rotated' }, 0] }, next: 'rotate' },
          ],
          otherwise: 'done',
        },
        pause: { kind: 'sleep', ms: 1, next: 'answer' },
        rotate: { kind: 'continueAsNew', carry: { rotated: 'outputs.answer.iteration' } },
        done: { kind: 'succeed' },
      },
    };
    const runner = createRunner({
      store,
      workflows: [rounds],
      handlers: {
        answer: ({ stream, attempt, iteration, workflowInput }: HandlerContext) => {
          const run = (workflowInput as { rotated: number }).rotated ? 2 : 1;
          stream.write(`r${run}i${iteration}a${attempt}`);
          if (run === 1 && iteration === 1 && attempt === 1)
            throw new TaskError('model dropped the connection');
          return { iteration };
        },
      },
    });
    await runner.start('rounds', 'l-1', { rotated: 0 });
    let s = await runner.get('l-1');
    for (let i = 0; i < 50 && s?.status !== 'completed'; i++) {
      await new Promise((r) => setTimeout(r, 5));
      await runner.processDue(Date.now());
      s = await runner.get('l-1');
    }
    expect(s?.status).toBe('completed');
    expect(s?.run).toBe(2);
    expect(await entries(store, 'l-1')).toEqual([
      'reset answer@2',
      'answer@2:r1i1a2',
      'answer#1.2@1:r1i2a1',
      'answer#2.1@1:r2i1a1',
      'answer#2.2@1:r2i2a1',
    ]);
  });

  it('records what handlers stream in the harness', async () => {
    const h = createHarness(reply).start();
    await h.run({
      answer: ({ stream }: HandlerContext) => {
        stream.write({ delta: 'hi' });
        return { text: 'hi' };
      },
    });
    expect(h.streamed).toEqual([{ step: 'answer', attempt: 1, data: { delta: 'hi' } }]);
  });
});
