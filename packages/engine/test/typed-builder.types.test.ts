import {
  type HandlerContext,
  type HumanDecision,
  type InputOf,
  type OutputOf,
  type SignalsOf,
  type StepOutputsOf,
  type,
  workflow,
} from '@stepfold/engine';
import { describe, expectTypeOf, it } from 'vitest';
import * as z from 'zod/mini';

// Type-level promises of the builder, checked by tsc (`pnpm typecheck`); vitest runs them as no-ops.

const handlers = {
  validate: async ({ input }: HandlerContext<{ amount: number }>) => ({
    cents: input.amount * 100,
    at: new Date(),
  }),
  charge: async ({ input }: HandlerContext<{ cents: number }>) => ({ paymentId: `p-${input.cents}` }),
  refund: async (_: HandlerContext<{ cents: number }>) => null,
};

const order = workflow('order', 1)
  .handlers<typeof handlers>()
  .input(z.object({ amount: z.number(), email: z.string() }))
  .signal('shipped', z.object({ tracking: z.string() }))
  .task('validate', { handler: 'validate', input: { amount: 'input.amount' } })
  .task('charge', { handler: 'charge', compensate: 'refund', input: { cents: 'outputs.validate.cents' } })
  .wait('ship', { signal: 'shipped' })
  .human('approve')
  .build();

describe('typed builder', () => {
  it('carries the input, outputs (JSON round-tripped) and signals of the definition', () => {
    expectTypeOf<InputOf<typeof order>>().toEqualTypeOf<{ amount: number; email: string }>();
    expectTypeOf<StepOutputsOf<typeof order>['validate']>().toEqualTypeOf<{ cents: number; at: string }>();
    expectTypeOf<StepOutputsOf<typeof order>['charge']>().toEqualTypeOf<{ paymentId: string }>();
    expectTypeOf<StepOutputsOf<typeof order>['ship']>().toEqualTypeOf<{ tracking: string }>();
    expectTypeOf<SignalsOf<typeof order>['shipped']>().toEqualTypeOf<{ tracking: string }>();
    expectTypeOf<OutputOf<typeof order>>().toEqualTypeOf<unknown>();
  });

  it('refuses what the compiler can see', () => {
    const base = workflow('w', 1)
      .handlers<typeof handlers>()
      .input<{ amount: number }>()
      .signal('go', type<{ ok: boolean }>())
      .task('validate', { handler: 'validate' });
    // @ts-expect-error a handler name that does not exist
    base.task('x', { handler: 'validat' });
    // @ts-expect-error a typo in a step id of a data path
    base.task('y', { handler: 'charge', input: { cents: 'outputs.validat.cents' } });
    // @ts-expect-error the mapped input has the wrong type (string where a number is wanted)
    base.task('z', { handler: 'charge', input: { cents: 'outputs.validate.at' } });
    // @ts-expect-error the workflow input does not fit a handler that wants { cents }
    base.task('w', { handler: 'charge' });
    // @ts-expect-error a signal name that was not declared
    base.wait('v', { signal: 'og' });
    expectTypeOf(base.wait('ok', { signal: 'go' })).not.toBeNever();
  });
});

describe('human steps', () => {
  const payHandlers = { pay: async ({ input }: HandlerContext<{ by: string }>) => ({ paidBy: input.by }) };
  const approval = z.object({ decision: z.enum(['approve', 'reject']), by: z.string() });

  it("output the payload type `.signal(name, schema)` declared for the step's signal", () => {
    const expense = workflow('expense', 1)
      .handlers<typeof payHandlers>()
      .signal('approve', approval)
      .human('approve')
      .task('pay', { handler: 'pay', input: { by: 'outputs.approve.by' } })
      .build();
    expectTypeOf<StepOutputsOf<typeof expense>['approve']>().toEqualTypeOf<{
      decision: 'approve' | 'reject';
      by: string;
    }>();
    // Its own `signal` name too.
    const named = workflow('named', 1)
      .handlers<typeof payHandlers>()
      .signal('decided', approval)
      .human('approve', { signal: 'decided' })
      .task('pay', { handler: 'pay', input: 'outputs.approve' })
      .build();
    expectTypeOf<StepOutputsOf<typeof named>['approve']>().toEqualTypeOf<{
      decision: 'approve' | 'reject';
      by: string;
    }>();
  });

  it('without a declared schema output any decision, so a mapping of its fields does not fit', () => {
    const plain = workflow('plain', 1).handlers<typeof payHandlers>().human('approve');
    expectTypeOf<StepOutputsOf<ReturnType<typeof plain.build>>['approve']>().toEqualTypeOf<HumanDecision>();
    // @ts-expect-error the mapped input does not match the handler input (by is unknown)
    plain.task('pay', { handler: 'pay', input: { by: 'outputs.approve.by' } });
  });
});

describe('succeed and the declared output', () => {
  const outHandlers = { n: async () => ({ n: 1 }) };
  const declared = () => workflow('w', 1).handlers<typeof outHandlers>().output<{ n: number }>();

  it('a succeed without a mapping ends a parallel branch', () => {
    const wf = declared()
      .parallel('fork', { branches: ['a', 'b'] })
      .task('a', { handler: 'n' })
      .succeed('aDone', { end: true })
      .task('b', { handler: 'n' })
      .succeed('bDone', { end: true })
      .build();
    expectTypeOf<OutputOf<typeof wf>>().toEqualTypeOf<{ n: number }>();
  });

  it('still refuses a mapping that does not fit, and a succeed that would end the workflow with none', () => {
    const wf = declared().task('n', { handler: 'n' });
    wf.succeed('done', { output: 'outputs.n' });
    // @ts-expect-error outputs.n.n is a number, not { n: number }
    wf.succeed('done', { output: 'outputs.n.n' });
    // @ts-expect-error no parallel step before it: it ends the workflow, with no output
    wf.succeed('done', { end: true });
    // @ts-expect-error in a branch too, a mapping must fit
    wf.parallel('p', { branches: ['x'] }).succeed('x', { output: 'outputs.n.n', end: true });
    // Without .output() anything goes.
    expectTypeOf(workflow('free', 1).succeed('done', { end: true })).not.toBeNever();
  });
});
