import {
  createMemoryStore,
  createRunner,
  errorKind,
  type HandlerContext,
  isStepfoldError,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';

// Two versions of one workflow registered side by side, as an order service has them while v1
// instances drain: a client made from one definition works with that version only.

const handlers = {
  reserve: async ({ input }: HandlerContext<{ sku: string }>) => ({ reservation: `R-${input.sku}` }),
  reserveMany: async ({ input }: HandlerContext<{ skus: string[] }>) => ({ count: input.skus.length }),
};

const orderV1 = workflow('order', 1)
  .handlers<typeof handlers>()
  .input(z.object({ sku: z.string() }))
  .signal('shipped', z.object({ tracking: z.string() }))
  .task('reserve', { handler: 'reserve', input: { sku: 'input.sku' } })
  .wait('ship', { signal: 'shipped' })
  .build();

// v2 takes several skus: v1's input does not fit it.
const orderV2 = workflow('order', 2)
  .handlers<typeof handlers>()
  .input(z.object({ skus: z.array(z.string()) }))
  .signal('shipped', z.object({ tracking: z.string() }))
  .task('reserve', { handler: 'reserveMany', input: { skus: 'input.skus' } })
  .wait('ship', { signal: 'shipped' })
  .build();

function setup() {
  const store = createMemoryStore();
  const runner = createRunner({ store, workflows: [orderV1, orderV2], handlers });
  return { store, runner, v1: runner.client(orderV1), v2: runner.client(orderV2) };
}

const mismatch = (e: unknown) => isStepfoldError(e, 'WORKFLOW_MISMATCH');

describe('a typed client works with its own definition version', () => {
  it('starts the version of the definition it was given, not the newest registered', async () => {
    const { v1, v2 } = setup();
    const old = await v1.start('o-1', { sku: 'BOOK' });
    expect(old.workflow.version).toBe(1);
    expect(old.steps.reserve?.output).toEqual({ reservation: 'R-BOOK' });
    const next = await v2.start('o-2', { skus: ['A', 'B'] });
    expect(next.workflow.version).toBe(2);
    expect(next.steps.reserve?.output).toEqual({ count: 2 });
  });

  it("starts its own version from signal's startIfMissing", async () => {
    const { v1 } = setup();
    const s = await v1.signal(
      'o-3',
      'shipped',
      { tracking: 'T-1' },
      { startIfMissing: { input: { sku: 'PEN' } } },
    );
    expect(s.workflow.version).toBe(1);
    expect(s.status).toBe('completed');
  });

  it("get returns its own version's instance, null for none, and refuses another version's", async () => {
    const { v1, v2 } = setup();
    await v1.start('o-1', { sku: 'BOOK' });
    await v2.start('o-2', { skus: ['A'] });
    expect((await v1.get('o-1'))?.input).toEqual({ sku: 'BOOK' });
    expect(await v1.get('nobody')).toBeNull();
    await expect(v1.get('o-2')).rejects.toSatisfy(mismatch);
    await expect(v2.get('o-1')).rejects.toSatisfy(mismatch);
  });

  it("refuses to signal, cancel, abort or requeue another version's instance, writing nothing", async () => {
    const { store, v1, v2 } = setup();
    await v2.start('o-2', { skus: ['A'] });
    const before = await store.load('o-2');
    await expect(v1.signal('o-2', 'shipped', { tracking: 'T-1' })).rejects.toSatisfy(mismatch);
    await expect(
      v1.signal('o-2', 'shipped', { tracking: 'T-1' }, { startIfMissing: { input: { sku: 'X' } } }),
    ).rejects.toSatisfy(mismatch);
    await expect(v1.cancel('o-2')).rejects.toSatisfy(mismatch);
    await expect(v1.abort('o-2')).rejects.toSatisfy(mismatch);
    await expect(v1.requeue('o-2')).rejects.toSatisfy(mismatch);
    expect(await store.load('o-2')).toEqual(before);
    // Its own client still moves it on.
    expect((await v2.signal('o-2', 'shipped', { tracking: 'T-1' })).status).toBe('completed');
  });

  it('the error names both versions and is a refusal (409)', async () => {
    const { v1, v2 } = setup();
    await v2.start('o-2', { skus: ['A'] });
    const e = await v1.cancel('o-2').catch((x: unknown) => x);
    expect(e).toMatchObject({
      code: 'WORKFLOW_MISMATCH',
      retryable: false,
      expected: { name: 'order', version: 1 },
      found: { name: 'order', version: 2 },
    });
    expect((e as Error).message).toContain("runs order v2, not the client's order v1");
    expect(errorKind(e)).toBe('refused');
  });
});
