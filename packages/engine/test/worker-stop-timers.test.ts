import { createMemoryStore, createRunner, createWorker, workflow } from '@stepfold/engine';
import { afterEach, describe, expect, it, vi } from 'vitest';

// A stopped worker must leave no timer behind: one would keep the process alive after
// `await worker.stop()` (for shutdown.abortMs, 5 s by default). Fake timers count what is left;
// they advance with real time, so the worker runs as it does in production.

const greet = workflow('greet', 1).task('hello', { handler: 'hello' }).build();

afterEach(() => {
  vi.useRealTimers();
});

function fakeTimers() {
  vi.useFakeTimers({
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'],
    shouldAdvanceTime: true,
  });
}

describe('worker.stop()', () => {
  it('leaves no timer behind once it resolves', async () => {
    fakeTimers();
    const store = createMemoryStore();
    const runner = createRunner({ store, workflows: [greet], handlers: { hello: () => 'hi' } });
    const worker = createWorker({ runner });
    await worker.start();
    await runner.start('greet', 'g-1', undefined, { wait: 'write' });
    await worker.idle();
    expect((await store.load('g-1'))?.status).toBe('completed');
    await worker.stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('leaves no timer behind after draining a handler that finishes within the grace', async () => {
    fakeTimers();
    const store = createMemoryStore();
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    let started: () => void = () => {};
    const running = new Promise<void>((r) => (started = r));
    const runner = createRunner({
      store,
      workflows: [greet],
      handlers: {
        hello: async () => {
          started();
          await held;
          return 'hi';
        },
      },
    });
    const worker = createWorker({ runner });
    await worker.start();
    await runner.start('greet', 'g-2', undefined, { wait: 'write' });
    await running;
    const stopped = worker.stop();
    release();
    await stopped;
    expect(vi.getTimerCount()).toBe(0);
  });
});
