import {
  type HandlerContext,
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
