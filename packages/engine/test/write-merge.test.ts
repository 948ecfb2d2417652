import {
  composition,
  createMemoryStore,
  createRunner,
  defineWorkflow,
  type Snapshot,
  type Store,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
// The write loop is internal: reached in the built package, as the runner reaches it.
import { createRegistry } from '../dist/runner/registry.js';
import { WriteLoop } from '../dist/runner/write-loop.js';

// Handler results of one call that finish while an earlier write of their instance is in flight
// share one write: one conditional save applies them all, in order (a map's items finish in bursts).

/** A memory store that counts saves per instance and can hold them until released. */
function countingStore() {
  const inner = createMemoryStore();
  const saves = new Map<string, number>();
  let gate: Promise<void> | undefined;
  const store: Store = Object.create(inner);
  store.save = async (s, v, o) => {
    saves.set(s.id, (saves.get(s.id) ?? 0) + 1);
    await gate;
    return inner.save(s, v, o);
  };
  return {
    store,
    saves,
    hold() {
      let open!: () => void;
      gate = new Promise((r) => (open = r));
      return () => {
        gate = undefined;
        open();
      };
    },
  };
}

describe('merged handler results', () => {
  it('a burst of map results costs fewer saves than results, and every item is applied once', async () => {
    const { store, saves } = countingStore();
    const fan = defineWorkflow({
      name: 'fan',
      version: 1,
      start: 'each',
      steps: { each: { kind: 'map', items: 'input.xs', handler: 'h', maxConcurrency: 20 } },
    });
    const runner = createRunner({
      kinds: [composition],
      store,
      workflows: [fan],
      handlers: { h: async ({ input }) => (input as number) * 3 },
    });
    const xs = Array.from({ length: 200 }, (_, i) => i);
    const s = await runner.start('fan', 'f-1', { xs });
    expect(s.status).toBe('completed');
    expect(s.output).toEqual(xs.map((x) => x * 3));
    // One save per result would be 200; results that finish together share one.
    expect(saves.get('f-1')!).toBeLessThan(150);
    // The version still grows by one per applied event (200 results plus the start).
    expect(s.version).toBe(201);
  });

  it('a merged result the reducer refuses is reported alone; the others are written', async () => {
    const { store, saves, hold } = countingStore();
    const two = defineWorkflow({
      name: 'two',
      version: 1,
      start: 'fork',
      steps: {
        fork: { kind: 'parallel', branches: ['a', 'b'] },
        a: { kind: 'task', handler: 'h' },
        b: { kind: 'task', handler: 'h' },
      },
    });
    const registry = createRegistry({ workflows: [two] });
    const writes = new WriteLoop({ store, registry, clock: () => 1_000, conflictRetries: 3, handoff: true });
    const seen: Snapshot[] = [];
    const onWrite = (s: Snapshot) => seen.push(s);
    const started = await writes.create({ instance: { workflow: 'two', id: 'w-1' }, onWrite });
    const base = { snapshot: started, origin: 'reducer' as const };
    const release = hold();
    const result = (step: string) => (at: number) =>
      ({ type: 'task.completed', at, step, attempt: 1, key: `w-1/1/${step}/1`, output: step }) as const;
    // The first result's write holds the instance; the next two wait and share one write.
    const a = writes.apply({ id: 'w-1', event: result('a'), onWrite, base, merge: true });
    const bad = writes.apply({ id: 'w-1', event: result('nope'), onWrite, base, merge: true });
    const b = writes.apply({ id: 'w-1', event: result('b'), onWrite, base, merge: true });
    release();
    expect((await a).version).toBe(2);
    await expect(bad).rejects.toMatchObject({ code: 'INVALID_EVENT' });
    const sb = await b;
    expect(sb.status).toBe('completed');
    expect(sb.output).toEqual(['a', 'b']);
    expect(saves.get('w-1')).toBe(2);
    // Told once per write.
    expect(seen.map((s) => s.version)).toEqual([1, 2, 3]);
  });
});
