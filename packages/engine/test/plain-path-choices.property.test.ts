import { defineWorkflow, type Snapshot, type WorkflowEvent } from '@stepfold/engine';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { lockstep } from './plain-path-lockstep.js';

// A task's result whose `next` is a choice step (or a chain of them) reading the outputs, or a
// succeed step that ends the workflow with a mapped output: the plain path takes these straight
// into the next snapshot. It must agree with the deep-copy reference for every branch taken, for
// a choice that matches nothing, a succeed whose output reads nothing, a transition budget that
// runs out on the way, and inside a parallel branch (where a succeed ends the branch only).

const outputs = [undefined, 'outputs.t0', 'outputs.t2.n', { a: 'outputs.t0.n', b: 'input.n' }] as const;

const shapeArb = fc.record({
  otherwise: fc.boolean(),
  t1Next: fc.constantFrom(undefined, 'fin', 't2'),
  output: fc.nat(outputs.length - 1),
  parallel: fc.boolean(),
  maxTransitions: fc.constantFrom(undefined, undefined, 1, 2, 3),
});

const intentArb = fc.record({
  kind: fc.constantFrom('complete', 'complete', 'complete', 'fail', 'tick'),
  pick: fc.nat(),
  n: fc.option(fc.nat(3), { nil: undefined }),
  handoff: fc.boolean(),
  advance: fc.nat(6_000),
});

type Shape = typeof shapeArb extends fc.Arbitrary<infer T> ? T : never;

function definition(shape: Shape) {
  const fin = outputs[shape.output];
  const steps: Record<string, unknown> = {
    t0: { kind: 'task', handler: 'h0', next: 'c0' },
    c0: {
      kind: 'choice',
      branches: [
        { when: { '==': [{ var: 'outputs.t0.n' }, 0] }, next: 't1' },
        { when: { '==': [{ var: 'outputs.t0.n' }, 1] }, next: 'c1' },
      ],
      ...(shape.otherwise ? { otherwise: 'fin' } : {}),
    },
    c1: {
      kind: 'choice',
      branches: [{ when: { '==': [{ var: 'input.n' }, 1] }, next: 't2' }],
      otherwise: 'fin',
    },
    t1: { kind: 'task', handler: 'h1', ...(shape.t1Next ? { next: shape.t1Next } : {}) },
    t2: { kind: 'task', handler: 'h2', retry: { maxAttempts: 2, initialMs: 10, jitter: 0 }, next: 'c2' },
    // Back to the first task on 2 (a loop waits somewhere): each round enters the steps again.
    c2: {
      kind: 'choice',
      branches: [{ when: { '==': [{ var: 'outputs.t2.n' }, 2] }, next: 'back' }],
      otherwise: 'fin',
    },
    back: { kind: 'sleep', ms: 5, next: 't0' },
    fin: { kind: 'succeed', ...(fin === undefined ? {} : { output: fin }) },
  };
  if (shape.parallel) {
    steps['p'] = { kind: 'parallel', branches: ['t0', 'u0'] };
    steps['u0'] = { kind: 'task', handler: 'hu', next: 'uend' };
    steps['uend'] = { kind: 'succeed', output: 'outputs.u0' };
  }
  return defineWorkflow({
    name: 'choices',
    version: 1,
    start: shape.parallel ? 'p' : 't0',
    limits: { log: 10 },
    defaults: { retry: { maxAttempts: 1 } },
    steps: steps as never,
  });
}

describe('plain path = deep-copy reference (tasks through choices to a succeed)', () => {
  it('same JSON, no-ops and errors for every event', () => {
    fc.assert(
      fc.property(shapeArb, fc.array(intentArb, { maxLength: 30 }), fc.nat(2), (shape, intents, n) => {
        const def = definition(shape);
        let now = 1_000;
        const next = (s: Snapshot, k: number): WorkflowEvent | null => {
          const i = intents[k]!;
          const handoff = i.handoff ? { handoff: true } : {};
          if (i.kind === 'tick') {
            now += i.advance;
            return { type: 'tick', at: now, ...handoff };
          }
          const tasks = Object.values(s.tasks);
          const t = tasks[i.pick % Math.max(1, tasks.length)];
          if (!t) return null;
          const base = { at: now, step: t.step, attempt: t.attempt, ...handoff };
          if (i.kind === 'fail')
            return { type: 'task.failed', ...base, error: { message: 'x', retryable: true } };
          return { type: 'task.completed', ...base, ...(i.n === undefined ? {} : { output: { n: i.n } }) };
        };
        lockstep(def, { type: 'start', at: now, id: 'p', input: { n } }, next, intents.length, {
          ...(shape.maxTransitions === undefined ? {} : { maxTransitions: shape.maxTransitions }),
        });
      }),
      { numRuns: 400 },
    );
  });
});
