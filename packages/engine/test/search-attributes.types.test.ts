import { type HandlerContext, workflow } from '@stepfold/engine';
import { describe, it } from 'vitest';

// Type-level promises of search attributes in the builder, checked by tsc (`pnpm typecheck`): a
// `from` path is one of the data's paths whose value fits the declared type.

const handlers = {
  price: async (_: HandlerContext<unknown>) => ({ total: 3, currency: 'EUR', lines: ['a'] }),
};

const base = workflow('w', 1)
  .handlers<typeof handlers>()
  .input<{ customerId: string; vip?: boolean; placedAt: number; nested: { region: string } }>()
  .task('price', { handler: 'price' });

describe('search attributes in the typed builder', () => {
  it('takes paths to values of the declared type, and none for a handler-set one', () => {
    base
      .search('customerId', { type: 'string', from: 'input.customerId' })
      .search('vip', { type: 'boolean', from: 'input.vip' })
      .search('placedAt', { type: 'time', from: 'input.placedAt' })
      .search('region', { type: 'string', from: 'input.nested.region' })
      .search('total', { type: 'number', from: 'outputs.price.total' })
      .search('reviewer', { type: 'string' });
    workflow('u', 1).search('anything', { type: 'number', from: 'input.whatever' });
  });

  it('refuses what the compiler can see', () => {
    // @ts-expect-error a path to a string for a number attribute
    base.search('x', { type: 'number', from: 'input.customerId' });
    // @ts-expect-error a path that does not exist
    base.search('x', { type: 'string', from: 'input.custmer' });
    // @ts-expect-error a path to an object
    base.search('x', { type: 'string', from: 'input.nested' });
    // @ts-expect-error a path to an array
    base.search('x', { type: 'string', from: 'outputs.price.lines' });
    // @ts-expect-error a type the stores do not index
    base.search('x', { type: 'date' });
  });
});
