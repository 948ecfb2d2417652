import { createRunner, defineWorkflow, step } from '@stepfold/engine';
import { createMemoryStore } from '@stepfold/engine/memory';
import { describe, expect, it } from 'vitest';

// This file does not import '@stepfold/engine/composition' (vitest gives each file its own
// modules): child and map steps parse, but nothing runs them, and each refusal says what to import.

const fanOut = defineWorkflow({
  name: 'fan-out',
  version: 1,
  start: 'each',
  steps: { each: { kind: 'map', items: 'input.xs', handler: 'h' } },
});

describe('child and map steps without the composition entry', () => {
  it('parse and hash like any step', () => {
    expect(fanOut.steps['each']!.kind).toBe('map');
  });

  it('are refused by createRunner with KIND_NOT_LOADED, naming the import', () => {
    let error: unknown;
    try {
      createRunner({ store: createMemoryStore(), workflows: [fanOut], handlers: { h: () => null } });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'KIND_NOT_LOADED' });
    expect(String((error as Error).message)).toContain("import '@stepfold/engine/composition'");
  });

  it('are refused by the reducer when the cursor reaches them, returning nothing', () => {
    expect(() => step(fanOut, null, { type: 'start', at: 0, id: 'f-1', input: { xs: [1] } })).toThrow(
      expect.objectContaining({ code: 'KIND_NOT_LOADED' }),
    );
  });
});
