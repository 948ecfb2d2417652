import { defineWorkflow, workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { issuesOf } from './definition-issues.js';

// What the builder's types refuse is refused again by build() at run time for callers that bypass
// the types (casts, JavaScript), with every issue listed; and two definition errors name their cause.

// The types are bypassed as a JavaScript caller would: through `any`.
// biome-ignore lint/suspicious/noExplicitAny: the point is to go around the types.
const loose = (b: unknown) => b as any;

describe('build() refuses input paths the declared schema cannot have', () => {
  const expense = z.object({ amount: z.number(), owner: z.object({ team: z.string() }) });

  it('a typo in a choice condition (the 5,000 € expense that skipped its second approver)', () => {
    const b = loose(workflow('expense', 1).input(expense)).choice('big', {
      branches: [{ when: { '>=': [{ var: 'input.amout' }, 5000] }, next: 'second' }],
      otherwise: 'pay',
    });
    const issues = issuesOf(() =>
      b.human('second').task('pay', { handler: 'pay', input: 'input.owner.tem' }).build(),
    );
    expect(issues).toEqual([
      'steps.big.branches.0.when.>=.0: "input.amout": the declared input has no "amout" there (did you mean "amount"?)',
      'steps.pay.input: "input.owner.tem": the declared input has no "tem" there (did you mean "team"?)',
    ]);
  });

  it('accepts paths the schema has, and any path where the schema does not tell its keys', () => {
    const ok = workflow('expense', 1)
      .input(expense)
      .choice('big', {
        branches: [{ when: { '>=': [{ var: 'input.amount' }, 5000] }, next: 'second' }],
        otherwise: 'pay',
      })
      .human('second')
      .task('pay', { handler: 'pay', input: 'input.owner.team' });
    expect(() => ok.build()).not.toThrow();
    const open = loose(workflow('open', 1).input(z.looseObject({ amount: z.number() })));
    expect(() => open.task('t', { handler: 'h', input: 'input.other' }).build()).not.toThrow();
    const opaque = loose(workflow('opaque', 1).input<{ amount: number }>());
    expect(() => opaque.task('t', { handler: 'h', input: 'input.other' }).build()).not.toThrow();
  });
});

describe('build() refuses what the signal types refuse', () => {
  it('a step listening for a signal not declared with .signal(), once any is declared', () => {
    const b = loose(workflow('ship', 1).signal('shipped', z.object({ tracking: z.string() })));
    const issues = issuesOf(() =>
      b.wait('ship', { signal: 'shipped' }).wait('late', { signal: 'shiped' }).build(),
    );
    expect(issues).toEqual([
      'steps.late.signal: signal "shiped" is not declared with .signal() (did you mean "shipped"?)',
    ]);
  });

  it("a human step's own signal counts as declared; none declared means any name", () => {
    const human = workflow('h', 1).signal('go', z.object({})).human('approve').wait('w', { signal: 'go' });
    expect(() => human.wait('again', { signal: 'approve' }).build()).not.toThrow();
    expect(() => workflow('free', 1).wait('w', { signal: 'anything' }).build()).not.toThrow();
  });
});

describe('definition errors that name their cause', () => {
  it('a step id used twice: one issue, no echo of a cycle', () => {
    const b = loose(workflow('d', 1)).task('a', { handler: 'h' }).task('b', { handler: 'h' });
    expect(issuesOf(() => b.task('a', { handler: 'h' }).build())).toEqual([
      'steps.2.id: duplicate step id "a"',
    ]);
  });

  it('a parallel step without next: the steps after it are unreachable because of it', () => {
    const b = workflow('p', 1)
      .parallel('fan', { branches: ['a', 'b'] })
      .task('a', { handler: 'h', end: true })
      .task('b', { handler: 'h', end: true })
      .task('after', { handler: 'h' })
      .task('last', { handler: 'h' });
    expect(issuesOf(() => b.build())).toEqual([
      'steps.after: unreachable from the start step: parallel step "fan" has no next, so the steps after it are unreachable (give "fan" next: "after")',
      'steps.last: unreachable from the start step: parallel step "fan" has no next, so the steps after it are unreachable (give "fan" next: "after")',
    ]);
    const json = {
      name: 'p',
      version: 1,
      start: 'x',
      steps: { x: { kind: 'succeed' }, y: { kind: 'succeed' } },
    } as const;
    expect(issuesOf(() => defineWorkflow(json))).toEqual(['steps.y: unreachable from the start step']);
  });
});
