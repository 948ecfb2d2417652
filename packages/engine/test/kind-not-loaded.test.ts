import {
  composition,
  createHarness,
  createMemoryStore,
  createRunner,
  defineWorkflow,
  step,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// Child and map steps run only where the `composition` value is passed: importing its entry (as
// this file does) enables nothing by itself, and the harness refuses what the runner refuses.

const fanOut = defineWorkflow({
  name: 'fan-out',
  version: 1,
  start: 'each',
  steps: { each: { kind: 'map', items: 'input.xs', handler: 'h' } },
});
const start = { type: 'start', at: 0, id: 'f-1', input: { xs: [1, 2] } } as const;

/** The error `f` throws (or undefined). */
function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('child and map steps without kinds: [composition]', () => {
  it('parse and hash like any step', () => {
    expect(fanOut.steps['each']!.kind).toBe('map');
  });

  it('are refused by createRunner with KIND_NOT_LOADED, naming the option', () => {
    const error = thrown(() =>
      createRunner({ store: createMemoryStore(), workflows: [fanOut], handlers: { h: () => null } }),
    );
    expect(error).toMatchObject({ code: 'KIND_NOT_LOADED' });
    expect(String((error as Error).message)).toContain('kinds: [composition]');
    expect(String((error as Error).message)).toContain('workflow fan-out has map steps');
  });

  it('are refused by step before anything runs, though the composition entry is imported', () => {
    const error = thrown(() => step(fanOut, null, start));
    expect(error).toMatchObject({ code: 'KIND_NOT_LOADED' });
    expect(String((error as Error).message)).toContain('kinds: [composition]');
  });

  it('are refused by the harness exactly as by the runner', () => {
    const error = thrown(() => createHarness(fanOut).start({ xs: [1] }));
    expect(error).toMatchObject({ code: 'KIND_NOT_LOADED' });
  });
});

describe('child and map steps with kinds: [composition]', () => {
  it('run in step, the harness and a runner alike', async () => {
    const s = step(fanOut, null, start, { kinds: [composition] });
    expect(Object.keys(s.tasks).sort()).toEqual(['each[0]', 'each[1]']);

    const h = createHarness(fanOut, { kinds: [composition] }).start({ xs: [1, 2] });
    expect(Object.keys(h.snapshot.tasks).sort()).toEqual(['each[0]', 'each[1]']);

    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [fanOut],
      handlers: { h: ({ input }: { input: unknown }) => input },
      kinds: [composition],
    });
    const done = await runner.start('fan-out', 'f-2', { xs: [1, 2] });
    expect(done.status).toBe('completed');
  });

  it('passed to one call change no other call', () => {
    step(fanOut, null, start, { kinds: [composition] });
    createRunner({
      store: createMemoryStore(),
      workflows: [fanOut],
      handlers: { h: () => null },
      kinds: [composition],
    });
    expect(thrown(() => step(fanOut, null, start))).toMatchObject({ code: 'KIND_NOT_LOADED' });
  });
});
