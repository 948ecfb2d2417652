import { createMemoryStore, createRunner, workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

describe("a handler's AbortSignal", () => {
  it('fires at the task deadline while the handler still runs', async () => {
    const slow = workflow('slow', 1)
      .task('wait', { handler: 'waitForAbort', timeoutMs: 40, retry: { maxAttempts: 1 } })
      .build();
    const reasons: string[] = [];
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [slow],
      handlers: {
        waitForAbort: ({ signal }) =>
          new Promise((_, reject) => {
            signal.addEventListener('abort', () => {
              reasons.push(String((signal.reason as Error).message));
              reject(signal.reason);
            });
          }),
      },
    });
    const s = await runner.start('slow', 'slow-1', {});
    expect(reasons).toEqual(['deadline exceeded']);
    expect(s.status).toBe('failed');
    expect(s.error?.message).toBe('deadline exceeded');
  });

  it('is already aborted when first read after the abort, and stays quiet for handlers that never read it', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const wf = workflow('gated', 1).task('t', { handler: 'late' }).task('u', { handler: 'ignores' }).build();
    let readAfterCancel: boolean | undefined;
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [wf],
      handlers: {
        late: async (ctx) => {
          await gate; // does not touch ctx.signal until after the cancel
          readAfterCancel = ctx.signal.aborted;
          return null;
        },
        ignores: () => null,
      },
    });
    const started = runner.start('gated', 'g-1', {});
    await new Promise((r) => setTimeout(r, 5));
    await runner.cancel('g-1', 'stop');
    release();
    await started;
    await runner.idle();
    expect(readAfterCancel).toBe(true);
  });
});
