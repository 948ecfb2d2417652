import { createHarness, createMemoryStore, createRunner, workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';

// A requeue's input patch is held against the declared input before anything is written, as a
// start's input is: by the compiler where the patch is typed, at run time where it is not (a patch
// built as a record, a cast). Only the patch's own fields count against it.

const parks = workflow('parks', 1)
  .input(z.object({ sku: z.string(), qty: z.number() }))
  .task('charge', { handler: 'charge', onFailure: 'dlq', retry: { maxAttempts: 1 } })
  .build();

describe('a requeue input patch that does not fit the declared input', () => {
  it('is refused by the runner with INVALID_INPUT, nothing written', async () => {
    let fail = true;
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [parks],
      handlers: {
        charge: () => {
          if (fail) throw Object.assign(new Error('declined'), { retryable: false });
          return 1;
        },
      },
    });
    const parked = await runner.start('parks', 'p-1', { sku: 'A', qty: 1 });
    expect(parked.status).toBe('dlq');
    const patch: Record<string, unknown> = { qty: 'two' };
    await expect(runner.requeue('p-1', { inputPatch: patch as never })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      issues: [{ path: 'inputPatch.qty' }],
    });
    await expect(runner.client(parks).requeue('p-1', { inputPatch: patch as never })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    expect((await runner.get('p-1'))?.version).toBe(parked.version);
    fail = false;
    const done = await runner.requeue('p-1', { inputPatch: { qty: 2 } });
    expect(done.status).toBe('completed');
    expect(done.input).toEqual({ sku: 'A', qty: 2 });
  });

  it('is refused by the harness as the runner refuses it, nothing applied', () => {
    const h = createHarness(parks).start({ sku: 'A', qty: 1 });
    h.fail('charge', { message: 'declined', retryable: false });
    const before = h.snapshot;
    expect(() => h.requeue({ inputPatch: { qty: 'two' } as never })).toThrow(
      expect.objectContaining({
        code: 'INVALID_INPUT',
        issues: [expect.objectContaining({ path: 'inputPatch.qty' })],
      }),
    );
    expect(h.snapshot).toBe(before);
    expect(h.requeue({ inputPatch: { qty: 2 } })).toBe(true);
    expect(h.snapshot.input).toEqual({ sku: 'A', qty: 2 });
  });

  it('is not blamed for a stored field it leaves alone (an input older than its schema)', () => {
    const h1 = createHarness(parks).start({ sku: 'A', qty: 1 });
    h1.fail('charge', { message: 'declined', retryable: false });
    // As a version whose schema added qty might find an instance migrated without it.
    const stale = { ...h1.snapshot, input: { sku: 'A' } };
    const h = createHarness(parks, { from: stale });
    expect(h.requeue({ inputPatch: { sku: 'B' } })).toBe(true);
    expect(h.snapshot.input).toEqual({ sku: 'B' });
  });
});
