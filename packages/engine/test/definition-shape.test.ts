import { defineWorkflow, isStepfoldError, type ValidationError } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// Found by `pnpm fuzz` (definitions): an object graph with a cycle, or a nest thousands of levels
// deep, overflowed the stack of the reserved-key walk (a RangeError, not INVALID_DEFINITION).

function refusal(input: unknown): ValidationError {
  try {
    defineWorkflow(input as never);
  } catch (e) {
    if (isStepfoldError(e)) return e as ValidationError;
    throw e;
  }
  throw new Error('accepted');
}

const base = () => ({
  name: 'shape',
  version: 1,
  start: 'a',
  steps: { a: { kind: 'task', handler: 'h' } } as Record<string, unknown>,
});

describe('definitions that are not JSON-shaped are INVALID_DEFINITION', () => {
  it('a reference cycle is refused', () => {
    const input = base();
    const loop: Record<string, unknown> = { x: 1 };
    loop['self'] = loop;
    (input as Record<string, unknown>)['description'] = loop;
    const e = refusal(input);
    expect(e.code).toBe('INVALID_DEFINITION');
    expect(e.issues).toEqual([expect.objectContaining({ message: expect.stringMatching(/cycle/) })]);
  });

  it('a cycle through a step is refused too', () => {
    const input = base();
    const step = { kind: 'task', handler: 'h' } as Record<string, unknown>;
    step['input'] = { back: input };
    input.steps['a'] = step;
    expect(refusal(input).issues[0]?.message).toMatch(/cycle/);
  });

  it('a nest 20 000 levels deep is refused, not a stack overflow', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = { and: [deep] };
    const input = base();
    input.steps['b'] = { kind: 'choice', branches: [{ when: deep, next: 'a' }], otherwise: 'a' };
    const e = refusal(input);
    expect(e.code).toBe('INVALID_DEFINITION');
    expect(e.issues[0]?.message).toMatch(/nested too deep/);
  });

  it('a deep nest where a step kind belongs is refused too', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 5_000; i++) deep = [deep];
    const input = base();
    input.steps['a'] = { kind: deep, handler: 'h' };
    expect(refusal(input).code).toBe('INVALID_DEFINITION');
  });

  it('the same object used twice (no cycle) is fine', () => {
    const shared = { amount: 'input.amount' };
    const input = base();
    input.steps['a'] = { kind: 'task', handler: 'h', input: shared, next: 'b' };
    input.steps['b'] = { kind: 'task', handler: 'h', input: shared };
    expect(defineWorkflow(input as never).steps['b']?.kind).toBe('task');
  });
});

// NaN and ±Infinity are numbers to `typeof`: they were refused with "expected number, got number".
describe('a number field given NaN or Infinity is INVALID_DEFINITION saying a finite number is expected', () => {
  const refused = (step: Record<string, unknown>) =>
    [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY].map((v) => {
      const input = base();
      input.steps['a'] = JSON.parse(JSON.stringify(step), (_k, x) => (x === 'V' ? v : x));
      const e = refusal(input);
      return [e.code, e.issues.map((i) => `${i.path}: ${i.message}`)];
    });

  it('an integer field (maxConcurrency, retry.maxAttempts)', () => {
    expect(refused({ kind: 'map', items: 'input.xs', handler: 'h', maxConcurrency: 'V' })).toEqual([
      ['INVALID_DEFINITION', ['steps.a.maxConcurrency: expected a finite number, got NaN']],
      ['INVALID_DEFINITION', ['steps.a.maxConcurrency: expected a finite number, got Infinity']],
      ['INVALID_DEFINITION', ['steps.a.maxConcurrency: expected a finite number, got -Infinity']],
    ]);
    expect(refused({ kind: 'task', handler: 'h', retry: { maxAttempts: 'V' } })[1]).toEqual([
      'INVALID_DEFINITION',
      ['steps.a.retry.maxAttempts: expected a finite number, got Infinity'],
    ]);
  });

  it("a milliseconds field (a task's timeoutMs, a sleep's ms)", () => {
    expect(refused({ kind: 'task', handler: 'h', timeoutMs: 'V' })[0]).toEqual([
      'INVALID_DEFINITION',
      ['steps.a.timeoutMs: expected a finite number, got NaN'],
    ]);
    expect(refused({ kind: 'sleep', ms: 'V' })[1]).toEqual([
      'INVALID_DEFINITION',
      ['steps.a.ms: expected a finite number, got Infinity'],
    ]);
  });

  it('a fractional field (retry.factor, retry.jitter)', () => {
    expect(refused({ kind: 'task', handler: 'h', retry: { factor: 'V' } })[0]).toEqual([
      'INVALID_DEFINITION',
      ['steps.a.retry.factor: expected a finite number, got NaN'],
    ]);
    expect(refused({ kind: 'task', handler: 'h', retry: { jitter: 'V' } })[2]).toEqual([
      'INVALID_DEFINITION',
      ['steps.a.retry.jitter: expected a finite number, got -Infinity'],
    ]);
  });

  it('a fraction where an integer goes, or a number where a string goes, names the number', () => {
    const input = base();
    input.steps['a'] = { kind: 'map', items: 'input.xs', handler: 'h', maxConcurrency: 1.5 };
    expect(refusal(input).issues).toEqual([
      { path: 'steps.a.maxConcurrency', message: 'expected int, got 1.5' },
    ]);
    input.steps['a'] = { kind: 'task', handler: Number.NaN };
    expect(refusal(input).issues).toEqual([{ path: 'steps.a.handler', message: 'expected string, got NaN' }]);
  });
});
