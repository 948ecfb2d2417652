import { composition, createHarness, defineWorkflow, type Snapshot } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { issuesOf } from './definition-issues.js';

// A map step's `until`: once an item's result meets it, no further item is dispatched, and the step
// completes when the items in flight end (a search that stops at the first hit, an ASL Map that
// stops at its first failed iteration).

const search = (maxConcurrency: number) =>
  defineWorkflow({
    name: 'search',
    version: 1,
    start: 'look',
    steps: {
      look: {
        kind: 'map',
        items: 'input.shelves',
        handler: 'look',
        maxConcurrency,
        until: { '==': [{ var: 'result.found' }, true] },
      },
    },
  });

async function run(maxConcurrency: number, shelves: string[]) {
  const looked: string[] = [];
  const h = createHarness(search(maxConcurrency), { kinds: [composition] }).start({ shelves });
  await h.run({
    look: async ({ input }) => {
      looked.push(input as string);
      return { shelf: input, found: input === 'c' };
    },
  });
  return { looked, s: h.snapshot as Snapshot };
}

describe('map until', () => {
  it('dispatches no item after a result meets it, and completes with the slots it filled', async () => {
    const { looked, s } = await run(1, ['a', 'b', 'c', 'd', 'e']);
    expect(looked).toEqual(['a', 'b', 'c']);
    expect(s.status).toBe('completed');
    expect(s.steps['look']?.output).toEqual([
      { shelf: 'a', found: false },
      { shelf: 'b', found: false },
      { shelf: 'c', found: true },
      null,
      null,
    ]);
    expect(s.steps['look']?.map).toMatchObject({ total: 5, next: 3, ok: 3, stopped: true });
  });

  it('lets the items in flight finish', async () => {
    const { looked, s } = await run(3, ['c', 'a', 'b', 'd', 'e']);
    expect(looked).toEqual(['c', 'a', 'b']);
    expect(s.status).toBe('completed');
    expect(s.steps['look']?.map).toMatchObject({ next: 3, ok: 3, stopped: true });
  });

  it('runs every item when none meets it', async () => {
    const { looked, s } = await run(2, ['a', 'b', 'd']);
    expect(looked).toEqual(['a', 'b', 'd']);
    expect(s.steps['look']?.map?.stopped).toBeUndefined();
  });

  it('reads only result and index', () => {
    const bad = (until: unknown) =>
      issuesOf(() =>
        defineWorkflow({
          name: 'bad',
          version: 1,
          start: 'look',
          steps: { look: { kind: 'map', items: 'input.xs', handler: 'look', until } as never },
        }),
      );
    expect(bad({ var: 'input.stop' })).toEqual([
      'steps.look.until.var: path "input.stop" must start with result or index',
    ]);
    expect(bad({ '>': [{ var: 'index.n' }, 2] })).toEqual([
      'steps.look.until.>.0: path "index.n": index is a number',
    ]);
    expect(bad({ exists: 'result..x' })[0]).toContain('empty segment');
    expect(bad({ nope: 1 })[0]).toContain('unknown operator');
  });
});
