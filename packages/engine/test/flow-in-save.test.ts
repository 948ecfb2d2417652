import {
  createMemoryStore,
  createRunner,
  type FlowStore,
  flowControl,
  type SaveFlow,
  type Store,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it, vi } from 'vitest';

// On a store whose save does flow work (`flow.inSave`: the memory store, PostgreSQL), a write that
// dispatches one limited attempt takes its holder in the save, and releases what it ended there:
// no acquire or release call of its own. A refusal wrote nothing, and the runner asks `acquire`
// alone, which records the waiter.

/** The memory store with its calls recorded: each acquire's holder and each save's flow work. */
function recordedStore(): { store: Store; flow: FlowStore; acquired: string[]; inSaves: SaveFlow[] } {
  const inner = createMemoryStore();
  const flow = inner.flow!;
  const acquired: string[] = [];
  const inSaves: SaveFlow[] = [];
  const store: Store = Object.assign(Object.create(inner) as Store, {
    save: (...a: Parameters<Store['save']>) => {
      if (a[2]?.flow) inSaves.push(a[2].flow);
      return inner.save(...a);
    },
    flow: {
      ...flow,
      acquire: (...a: Parameters<FlowStore['acquire']>) => {
        acquired.push(a[0]);
        return flow.acquire(...a);
      },
    },
  });
  return { store, flow, acquired, inSaves };
}

const twoSteps = workflow('two-limited', 1)
  .input<{ customer: string }>()
  .task('charge', { handler: 'work', concurrency: { key: 'input.customer', limit: 1 } })
  .task('ship', { handler: 'work', concurrency: { key: 'input.customer', limit: 1 } })
  .build();

describe('flow holders taken with the save', () => {
  it('a result that dispatches the next limited attempt takes its holder in the same save', async () => {
    const { store, flow, acquired, inSaves } = recordedStore();
    expect(flow.inSave).toBe(true);
    const runner = createRunner({
      kinds: [flowControl],
      store,
      workflows: [twoSteps],
      handlers: { work: () => null },
    });
    const s = await runner.start('two-limited', 'o-1', { customer: 'c1' });
    expect(s.status).toBe('completed');
    // The create takes the charge's slot in its own write (`flow.inCreate`); the charge's result
    // takes the ship's slot and releases the charge's, the ship's result releases the ship's.
    expect(acquired).toEqual([]);
    expect(inSaves.map((f) => [f.take?.holder, f.release])).toEqual([
      ['o-1/1/ship/1#run#1@2', ['o-1/1/charge/1#run#1@1']],
      [undefined, ['o-1/1/ship/1#run#1@2']],
    ]);
    expect((await flow.list({ limit: 10, now: Date.now() })).items).toEqual([]);
  });

  it('a holder refused in the save waits as a throttled attempt, and runs once the slot frees', async () => {
    const { store, flow, acquired, inSaves } = recordedStore();
    const runner = createRunner({
      kinds: [flowControl],
      store,
      workflows: [twoSteps],
      handlers: { work: () => null },
    });
    // Another holder takes the ship's key once the charge runs: the save taking the ship's slot is refused.
    const ship = { scope: 'two-limited/ship', key: 'c1', limit: 1 };
    const other = await flow.acquire('other#run#1', 'other', [ship], Date.now(), Date.now() + 60_000);
    expect(other.granted).toBe(true);
    await runner.start('two-limited', 'o-2', { customer: 'c1' }, { wait: 'write' });
    await vi.waitFor(async () => {
      const now = await runner.get('o-2');
      expect(now?.timers.some((t) => t.kind === 'throttle' && t.step === 'ship')).toBe(true);
    });
    expect(inSaves.map((f) => f.take?.holder)).toEqual(['o-2/1/ship/1#run#1@2', undefined]);
    // Asked alone after the refusal: the store recorded the waiter, so the release wakes it.
    expect(acquired).toContain('o-2/1/ship/1#run#1@2');
    const listed = (await flow.list({ limit: 10, now: Date.now() })).items.find(
      (c) => c.scope === ship.scope,
    );
    expect(listed?.waiting.map((w) => w.instance)).toEqual(['o-2']);

    const woken = await flow.release(['other#run#1'], Date.now());
    expect(woken).toEqual(['o-2']);
    await runner.tick('o-2');
    await vi.waitFor(async () => expect((await runner.get('o-2'))?.status).toBe('completed'));
  });

  it('a store wrapper that hides inSave and inCreate gets acquires, as before', async () => {
    const inner = createMemoryStore();
    const { inSave: _, inCreate: __, ...plainFlow } = inner.flow!;
    const acquired: string[] = [];
    const store: Store = Object.assign(Object.create(inner) as Store, {
      flow: {
        ...plainFlow,
        acquire: (...a: Parameters<FlowStore['acquire']>) => {
          acquired.push(a[0]);
          return plainFlow.acquire(...a);
        },
      },
    });
    const runner = createRunner({
      kinds: [flowControl],
      store,
      workflows: [twoSteps],
      handlers: { work: () => null },
    });
    expect((await runner.start('two-limited', 'o-3', { customer: 'c1' })).status).toBe('completed');
    expect(acquired).toEqual(['o-3/1/charge/1#run#1@1', 'o-3/1/ship/1#run#1@2']);
  });
});
