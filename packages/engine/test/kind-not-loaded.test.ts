import {
  composition,
  createHarness,
  createMemoryStore,
  createRunner,
  defineWorkflow,
  flowControl,
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

// Flow limits are a value too: a definition that declares any runs only where flowControl is passed.
const perKey = defineWorkflow({
  name: 'per-key',
  version: 1,
  start: 't',
  steps: { t: { kind: 'task', handler: 'h', concurrency: { key: 'input.k', limit: 1 } } },
});
const admitted = defineWorkflow({
  name: 'admitted',
  version: 1,
  start: 't',
  concurrency: { limit: 2 },
  steps: { t: { kind: 'task', handler: 'h' } },
});
const keyed = { type: 'start', at: 0, id: 'k-1', input: { k: 'a' } } as const;

describe('flow limits without kinds: [flowControl]', () => {
  it('are refused by createRunner with KIND_NOT_LOADED, naming the option', () => {
    for (const def of [perKey, admitted]) {
      const error = thrown(() =>
        createRunner({ store: createMemoryStore(), workflows: [def], handlers: { h: () => null } }),
      );
      expect(error).toMatchObject({ code: 'KIND_NOT_LOADED' });
      expect(String((error as Error).message)).toContain(
        `workflow ${def.name} has flow control: pass kinds: [flowControl]`,
      );
    }
  });

  it('are refused by step and by the harness, even beside composition', () => {
    expect(thrown(() => step(perKey, null, keyed))).toMatchObject({ code: 'KIND_NOT_LOADED' });
    expect(thrown(() => step(admitted, null, keyed, { kinds: [composition] }))).toMatchObject({
      code: 'KIND_NOT_LOADED',
    });
    expect(thrown(() => createHarness(perKey).start({ k: 'a' }))).toMatchObject({ code: 'KIND_NOT_LOADED' });
  });
});

describe('flow limits with kinds: [flowControl]', () => {
  it('run in step, the harness and a runner, beside composition too', async () => {
    expect(step(perKey, null, keyed, { kinds: [flowControl] }).tasks['t']!.needs).toEqual([
      { scope: 'per-key/t', key: 'a', limit: 1 },
    ]);
    const h = createHarness(perKey, { kinds: [composition, flowControl] }).start({ k: 'a' });
    expect(h.snapshot.tasks['t']!.needs).toHaveLength(1);
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [perKey, fanOut],
      handlers: { h: () => 1 },
      kinds: [composition, flowControl],
    });
    expect((await runner.start('per-key', 'k-2', { k: 'a' })).status).toBe('completed');
    expect((await runner.start('fan-out', 'f-3', { xs: [1] })).status).toBe('completed');
  });

  it('change nothing for a definition without limits', () => {
    const without = step(fanOut, null, start, { kinds: [composition] });
    const withFlow = step(fanOut, null, start, { kinds: [composition, flowControl] });
    expect(withFlow).toEqual(without);
  });
});
