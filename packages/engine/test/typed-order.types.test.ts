import {
  defineWorkflow,
  type HandlerContext,
  isStepfoldError,
  type StepOutputsOf,
  type,
  type ValidationError,
  workflow,
} from '@stepfold/engine';
import { describe, expect, expectTypeOf, it } from 'vitest';

// A typed order workflow: the mistakes a compiler can see fail `tsc` (the @ts-expect-error lines
// are checked by `pnpm typecheck`, which fails if a line stops being an error); the same mistakes
// in the JSON form fail `defineWorkflow` with every issue listed.

const handlers = {
  validateOrder: async ({ input }: HandlerContext<{ amount: number; sku: string }>) => ({
    amountCents: Math.round(input.amount * 100),
    sku: input.sku,
  }),
  reserveStock: async ({ input }: HandlerContext<{ sku: string }>) => ({ reservation: `R-${input.sku}` }),
  releaseStock: async (_: HandlerContext<{ sku: string }>) => null,
  chargeCard: async ({ input }: HandlerContext<{ amountCents: number }>) => ({
    paymentId: `P-${input.amountCents}`,
  }),
};

/** The same handlers after someone changed `validateOrder` to return the amount as a string. */
const changed = {
  ...handlers,
  validateOrder: async ({ input }: HandlerContext<{ amount: number; sku: string }>) => ({
    amountCents: input.amount.toFixed(2),
    sku: input.sku,
  }),
};

const base = () =>
  workflow('order', 1)
    .input(type<{ amount: number; sku: string; email: string }>())
    .signal('shipped', type<{ tracking: string }>());

describe('typed order workflow', () => {
  it('compiles when everything fits, with typed outputs', () => {
    const order = base()
      .handlers<typeof handlers>()
      .task('validate', { handler: 'validateOrder' })
      .task('reserve', {
        handler: 'reserveStock',
        compensate: 'releaseStock',
        input: { sku: 'outputs.validate.sku' },
      })
      .task('charge', { handler: 'chargeCard', input: { amountCents: 'outputs.validate.amountCents' } })
      .wait('ship', { signal: 'shipped' })
      .build();
    expectTypeOf<StepOutputsOf<typeof order>['charge']>().toEqualTypeOf<{ paymentId: string }>();
    expectTypeOf<StepOutputsOf<typeof order>['ship']>().toEqualTypeOf<{ tracking: string }>();
  });

  it('a changed handler return type fails tsc where the output is read', () => {
    base()
      .handlers<typeof changed>()
      .task('validate', { handler: 'validateOrder' })
      // @ts-expect-error amountCents is now a string; chargeCard wants a number
      .task('charge', { handler: 'chargeCard', input: { amountCents: 'outputs.validate.amountCents' } });
  });

  it('a renamed step used in an input path fails tsc', () => {
    base()
      .handlers<typeof handlers>()
      .task('check', { handler: 'validateOrder' }) // was 'validate'
      // @ts-expect-error outputs.validate no longer exists
      .task('charge', { handler: 'chargeCard', input: { amountCents: 'outputs.validate.amountCents' } });
  });

  it('listening for a signal that was not declared fails tsc', () => {
    // @ts-expect-error 'shiped' is not a declared signal
    base().handlers<typeof handlers>().wait('ship', { signal: 'shiped' });
  });

  it('the JSON form of the same mistakes fails defineWorkflow with every issue listed', () => {
    let issues: string[] = [];
    try {
      defineWorkflow({
        name: 'order',
        version: 1,
        start: 'check',
        steps: [
          { id: 'check', kind: 'task', handler: 'validateOrder', next: 'reserve' },
          {
            id: 'reserve',
            kind: 'task',
            handler: 'reserveStock',
            input: { sku: 'outputs.validate.sku' },
            next: 'charge',
          },
          {
            id: 'charge',
            kind: 'task',
            handler: 'chargeCard',
            input: { amountCents: 'outputs.validat.amountCents' },
          },
        ],
      });
    } catch (e) {
      expect(isStepfoldError(e, 'INVALID_DEFINITION')).toBe(true);
      issues = (e as ValidationError).issues.map((i) => i.path);
    }
    expect(issues).toEqual(['steps.reserve.input.sku', 'steps.charge.input.amountCents']);
  });
});
