import {
  composition,
  type DefinitionInput,
  defineWorkflow,
  flowControl,
  isStepfoldError,
  step,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';

// Flow limits as a definition writes them, and what is refused (INVALID_DEFINITION, with every
// problem listed at its path): at build time what any definition is checked for, the rest where
// flowControl is passed (the core parses only the shape of a limit).

function issues(def: unknown): Array<{ path: string; message: string }> {
  try {
    const d = defineWorkflow(def as DefinitionInput);
    step(d, null, { type: 'start', at: 0, id: 'i', input: {} }, { kinds: [composition, flowControl] });
  } catch (e) {
    if (isStepfoldError(e, 'INVALID_DEFINITION')) return (e as unknown as { issues: [] }).issues;
    throw e;
  }
  return [];
}

const withTask = (fields: object, header: object = {}) => ({
  name: 'w',
  version: 1,
  start: 'a',
  ...header,
  steps: {
    a: { kind: 'task', handler: 'a', next: 't' },
    t: { kind: 'task', handler: 't', ...fields },
  },
});

describe('flow limits in a definition', () => {
  it('parses anywhere: limits are checked where flowControl is passed', () => {
    const odd = defineWorkflow(withTask({ concurrency: { limit: 0 } }) as DefinitionInput);
    expect(odd.steps['t']).toMatchObject({ concurrency: { limit: 0 } });
    expect(defineWorkflow(withTask({ rateLimit: 3 }) as DefinitionInput).steps['t']).toMatchObject({
      rateLimit: 3,
    });
    expect(issues(withTask({ rateLimit: 3 }))[0]!.path).toBe('steps.t.rateLimit');
    expect(
      issues(withTask({}, { priority: 1.5, fairness: [{ key: 'input.t' }] })).map((i) => i.path),
    ).toEqual(['priority', 'fairness']);
  });

  it('accepts concurrency and rateLimit on a task, one or several, and concurrency, priority, fairness on the workflow', () => {
    expect(
      issues(
        withTask(
          {
            concurrency: [
              { key: 'input.customer', limit: 1 },
              { limit: 50, scope: 'shared' },
            ],
            rateLimit: { key: 'outputs.a.tenant', limit: 100, periodMs: 60_000 },
          },
          {
            concurrency: { key: 'input.tenant', limit: 5 },
            priority: 'input.priority',
            fairness: { key: 'input.tenant' },
          },
        ),
      ),
    ).toEqual([]);
  });

  it('refuses a limit or window that is not a positive integer', () => {
    expect(issues(withTask({ concurrency: { limit: 0 } }))).toEqual([
      { path: 'steps.t.concurrency.limit', message: 'must be at least 1' },
    ]);
    expect(issues(withTask({ concurrency: { limit: 1.5 } }))[0]!.path).toBe('steps.t.concurrency.limit');
    expect(issues(withTask({ rateLimit: { limit: 2, periodMs: 0 } }))).toEqual([
      { path: 'steps.t.rateLimit.periodMs', message: 'must be at least 1' },
    ]);
    expect(issues(withTask({ rateLimit: { limit: 2 } }))[0]!.path).toBe('steps.t.rateLimit.periodMs');
    expect(issues(withTask({}, { concurrency: { limit: -1 } }))[0]!.path).toBe('concurrency.limit');
  });

  it('checks key paths like mapping paths: known roots, steps that exist and come earlier', () => {
    expect(issues(withTask({ concurrency: { key: 'inptu.x', limit: 1 } }))).toEqual([
      { path: 'steps.t.concurrency.key', message: 'key: path "inptu.x" must start with input or outputs' },
    ]);
    expect(issues(withTask({ concurrency: [{ limit: 1 }, { key: 'outputs.b.x', limit: 1 }] }))).toEqual([
      {
        path: 'steps.t.concurrency.1.key',
        message: '"outputs.b.x" reads step "b", which does not exist (did you mean "a"?)',
      },
    ]);
    expect(issues(withTask({ concurrency: { key: 'outputs.t.x', limit: 1 } }))[0]!.message).toMatch(
      /cannot have completed before "t" runs/,
    );
  });

  it('a workflow limit, priority and fairness key may read only input', () => {
    expect(
      issues(
        withTask(
          {},
          { concurrency: { key: 'outputs.a.x', limit: 1 }, priority: 'outputs.a.p', fairness: { key: 'x' } },
        ),
      ).map((i) => i.path),
    ).toEqual(['concurrency.key', 'priority', 'fairness.key']);
    expect(
      issues(withTask({}, { concurrency: { key: 'outputs.a.x', limit: 1 } })).map((i) => i.path),
    ).toEqual(['concurrency.key']);
  });

  it('a map limit may read its item; a workflow map takes none', () => {
    const map = (fields: object) => ({
      name: 'm',
      version: 1,
      start: 'm',
      steps: { m: { kind: 'map', items: 'input.xs', ...fields } },
    });
    expect(issues(map({ handler: 'h', concurrency: { key: 'item.tenant', limit: 1 } }))).toEqual([]);
    expect(issues(map({ handler: 'h', rateLimit: { key: 'index', limit: 1, periodMs: 10 } }))).toEqual([]);
    expect(issues(map({ workflow: 'child', concurrency: { limit: 1 } }))).toEqual([
      {
        path: 'steps.m',
        message: 'concurrency and rateLimit apply to a handler map: limit the child workflow',
      },
    ]);
  });

  it('input key paths are checked against the declared input schema where flowControl is passed, for callers past the types', () => {
    const built = workflow('w', 1, { concurrency: { key: 'input.tenat', limit: 1 } })
      .input(z.object({ tenant: z.string() }))
      .task('t', { handler: 'h', concurrency: { key: 'input.custmer' as never, limit: 1 } })
      .build();
    let error: unknown;
    try {
      step(built, null, { type: 'start', at: 0, id: 'i', input: { tenant: 'a' } }, { kinds: [flowControl] });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'INVALID_DEFINITION' });
    expect((error as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual([
      'concurrency.key',
      'steps.t.concurrency.key',
    ]);
  });
});
