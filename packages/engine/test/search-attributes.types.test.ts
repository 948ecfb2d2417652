import {
  composition,
  createMemoryStore,
  createRunner,
  flowControl,
  type HandlerContext,
  searchAttributes,
  workflow,
} from '@stepfold/engine';
import { describe, it } from 'vitest';

// Type-level promises of search attributes in the builder, checked by tsc (`pnpm typecheck`): a
// `from` path is one of the data's paths whose value fits the declared type, and a workflow that
// declares any runs only on a runner given `kinds: [searchAttributes]`.

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

describe('search attributes need kinds: [searchAttributes]', () => {
  const store = createMemoryStore();
  const searched = workflow('searched', 1)
    .input<{ customerId: string }>()
    .task('t', { handler: 'h' })
    .search('customerId', { type: 'string', from: 'input.customerId' })
    .build();
  const limited = workflow('limited', 1)
    .input<{ customerId: string }>()
    .task('t', { handler: 'h', concurrency: { key: 'input.customerId', limit: 1 } })
    .search('customerId', { type: 'string', from: 'input.customerId' })
    .build();
  const plain = workflow('plain', 1).task('t', { handler: 'h' }).build();
  const handlers = { h: () => 1 };

  it('refuses a typed definition with attributes on a runner without the value, saying so in one line', () => {
    const typeOnly = () => {
      // @ts-expect-error Property 'kinds' is missing ... "search attributes run only with kinds: [searchAttributes] from '@stepfold/engine'"
      createRunner({ store, workflows: [searched], handlers });
      // @ts-expect-error another value does not bring them
      createRunner({ store, workflows: [searched], handlers, kinds: [composition] });
      // @ts-expect-error flow control and search attributes both missing: both are named
      createRunner({ store, workflows: [limited], handlers });
      // @ts-expect-error flow control given, search attributes missing
      createRunner({ store, workflows: [limited], handlers, kinds: [flowControl] });
    };
    void typeOnly;
  });

  it('takes them with searchAttributes, beside other values, and plain definitions without it', () => {
    const typeOnly = () => {
      createRunner({ store, workflows: [searched], handlers, kinds: [searchAttributes] });
      createRunner({ store, workflows: [limited], handlers, kinds: [flowControl, searchAttributes] });
      createRunner({ store, workflows: [plain], handlers });
      createRunner({ store, workflows: [plain], handlers, kinds: [searchAttributes] });
    };
    void typeOnly;
  });
});
