import { workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';

// Rules the docs state as "exactly one of two" or "at least one of three", refused by the compiler
// as well as at run time (INVALID_DEFINITION, see definition.test.ts). Each expected-error line is a
// mistake the compiler must see; these functions are never called.

const base = () => workflow('w', 1).input(z.object({ at: z.number() }));

describe('sleep: exactly one of ms and until', () => {
  it('takes one, refuses both and neither', () => {
    const typeOnly = () => {
      base().sleep('a', { ms: 1000 });
      base().sleep('a', { until: 'input.at' });
      // @ts-expect-error both
      base().sleep('a', { ms: 1000, until: 'input.at' });
      // @ts-expect-error neither
      base().sleep('a', {});
      // @ts-expect-error until is a path of the data
      base().sleep('a', { until: 'input.att' });
    };
    expect(typeof typeOnly).toBe('function');
  });
});

describe('collect: at least one of maxItems, idleMs and maxWaitMs', () => {
  it('takes any of them, refuses none', () => {
    const typeOnly = () => {
      base().collect('c', { signal: 'item', maxItems: 10 });
      base().collect('c', { signal: 'item', idleMs: 1000 });
      base().collect('c', { signal: 'item', maxWaitMs: 1000, maxItems: 5 });
      // @ts-expect-error no bound: it would never end
      base().collect('c', { signal: 'item' });
    };
    expect(typeof typeOnly).toBe('function');
  });
});

describe('map: exactly one of handler and workflow', () => {
  it('refuses both and neither', () => {
    const child = workflow('child', 1).task('t', { handler: 'h' }).build();
    const typeOnly = () => {
      const b = workflow('m', 1)
        .handlers<{ h: (ctx: { input: unknown }) => number }>()
        .input(z.object({ xs: z.array(z.number()) }));
      b.map('m', { items: 'input.xs', handler: 'h' });
      // @ts-expect-error both
      b.map('m', { items: 'input.xs', handler: 'h', workflow: child });
      // @ts-expect-error neither
      b.map('m', { items: 'input.xs' });
    };
    expect(typeof typeOnly).toBe('function');
  });
});
