import { describe, expect, it } from 'vitest';
import { compileWorkflow } from '../src/definition/compile.js';
import { RegistryError } from '../src/errors.js';
import { composition, defineWorkflow, makeTestSnapshot, type TaskState } from '../src/index.js';
import { ChildEffects } from '../src/runner/child-effects.js';
import { createRegistry } from '../src/runner/registry.js';
import type { WriteLoop } from '../src/runner/write-loop.js';
import { createMemoryStore } from '../src/store/memory-store.js';

// The `$child` effect on its own, over a write loop whose start of the child is refused: a refusal
// no later try can change must end the step, not leave it to be dispatched again at every deadline.

const payment = defineWorkflow({
  name: 'payment',
  version: 1,
  start: 'go',
  steps: { go: { kind: 'task', handler: 'go' } },
});
const order = defineWorkflow({
  name: 'order',
  version: 1,
  start: 'sub',
  steps: { sub: { kind: 'child', workflow: 'payment', timeoutMs: 1000 } },
});

function setup(refusal: Error) {
  const registry = createRegistry({ workflows: [order, payment], kinds: [composition] });
  const applied: unknown[] = [];
  const writes = {
    create: async () => {
      throw refusal;
    },
    apply: async (r: { event: (at: number) => unknown }) => {
      applied.push(r.event(5));
      return null;
    },
  } as unknown as WriteLoop;
  const effects = new ChildEffects({
    store: createMemoryStore(),
    registry,
    writes,
    clock: () => 5,
    viaInbox: () => false,
  });
  const workflow = { name: 'order', version: 1, hash: compileWorkflow(order).hash };
  const s = makeTestSnapshot('o-1', { workflow, input: {} });
  const task: TaskState = {
    step: 'sub',
    phase: 'run',
    attempt: 1,
    idempotencyKey: 'o-1/1/sub/1',
    child: 'o-1/1/sub/1',
    handler: '$child',
  } as TaskState;
  return { run: () => effects.run(s, task, () => {}), applied };
}

describe('a child effect whose start can never succeed', () => {
  for (const code of ['UNKNOWN_VERSION', 'UNKNOWN_WORKFLOW'] as const) {
    it(`reports the child failed with ${code} (not retryable) instead of throwing for the deadline to retry`, async () => {
      const { run, applied } = setup(new RegistryError(code, 'not registered here'));
      await run();
      expect(applied).toEqual([
        expect.objectContaining({
          type: 'child.ended',
          step: 'sub',
          status: 'failed',
          error: { message: 'not registered here', code },
        }),
      ]);
    });
  }

  it('still throws a transient failure, for the deadline to try again', async () => {
    const { run, applied } = setup(new Error('store down'));
    await expect(run()).rejects.toThrow('store down');
    expect(applied).toEqual([]);
  });
});
