import {
  composition,
  createHarness,
  createMemoryStore,
  createRunner,
  flowControl,
  type HandlerContext,
  type KeyPath,
  workflow,
} from '@stepfold/engine';
import { describe, expectTypeOf, it } from 'vitest';

// Type-level promises of flow limits in the builder, checked by tsc (`pnpm typecheck`): a key path
// is one of the data's paths to a string, number or boolean; a literal limit is a positive integer.

const handlers = {
  lookup: async (_: HandlerContext<{ id: string }>) => ({ tenant: 'acme', size: 3, tags: ['a'] }),
  charge: async (_: HandlerContext<{ id: string }>) => null,
};

const base = workflow('w', 1)
  .handlers<typeof handlers>()
  .input<{ id: string; customer: string; vip: boolean; nested: { region: string }; items: string[] }>()
  .task('lookup', { handler: 'lookup' });

describe('flow limits in the typed builder', () => {
  it('takes key paths to strings, numbers and booleans of the input and earlier outputs', () => {
    base.task('a', { handler: 'charge', concurrency: { key: 'input.customer', limit: 1 } });
    base.task('b', { handler: 'charge', concurrency: [{ key: 'input.vip', limit: 2 }, { limit: 10 }] });
    base.task('c', {
      handler: 'charge',
      rateLimit: { key: 'outputs.lookup.tenant', limit: 5, periodMs: 1000 },
    });
    base.task('d', {
      handler: 'charge',
      concurrency: { key: 'input.nested.region', limit: 1, scope: 'regions' },
    });
    base.task('e', {
      handler: 'charge',
      rateLimit: [{ key: 'outputs.lookup.size', limit: 1, periodMs: 10 }],
    });
    const limit: number = 3;
    base.task('f', { handler: 'charge', concurrency: { limit } });
    expectTypeOf<KeyPath<{ a: string; b: { c: number }; d: string[] }, object>>().toEqualTypeOf<
      'input.a' | 'input.b.c'
    >();
  });

  it('takes any input path while the input is undeclared', () => {
    workflow('u', 1).task('t', { handler: 'h', concurrency: { key: 'input.whatever.deep', limit: 1 } });
  });

  it('refuses what the compiler can see', () => {
    // @ts-expect-error a key path that does not exist
    base.task('x', { handler: 'charge', concurrency: { key: 'input.custmer', limit: 1 } });
    // @ts-expect-error a key path to an object, not a key value
    base.task('x', { handler: 'charge', concurrency: { key: 'input.nested', limit: 1 } });
    // @ts-expect-error a key path to an array
    base.task('x', { handler: 'charge', rateLimit: { key: 'outputs.lookup.tags', limit: 1, periodMs: 5 } });
    // @ts-expect-error a step that comes later (or does not exist)
    base.task('x', { handler: 'charge', concurrency: { key: 'outputs.later.id', limit: 1 } });
    // @ts-expect-error a limit of 0
    base.task('x', { handler: 'charge', concurrency: { limit: 0 } });
    // @ts-expect-error a negative limit
    base.task('x', { handler: 'charge', concurrency: { limit: -2 } });
    // @ts-expect-error a fractional limit
    base.task('x', { handler: 'charge', rateLimit: { limit: 1.5, periodMs: 100 } });
    // @ts-expect-error a window of 0 ms
    base.task('x', { handler: 'charge', rateLimit: { limit: 1, periodMs: 0 } });
    // @ts-expect-error a rate limit needs its window
    base.task('x', { handler: 'charge', rateLimit: { limit: 1 } });
    // @ts-expect-error a workflow limit's key reads only the input
    workflow('w', 1, { concurrency: { key: 'outputs.a', limit: 1 } });
  });

  it('map limits may read the item', () => {
    workflow('m', 1)
      .input<{ jobs: Array<{ tenant: string; body: object }> }>()
      .map('each', { items: 'input.jobs', handler: 'work', concurrency: { key: 'item.tenant', limit: 1 } });
    workflow('m', 1)
      .input<{ jobs: Array<{ tenant: string; body: object }> }>()
      // @ts-expect-error an item field that is an object
      .map('each', { items: 'input.jobs', handler: 'work', concurrency: { key: 'item.body', limit: 1 } });
  });
});

describe('flow limits need kinds: [flowControl]', () => {
  const store = createMemoryStore();
  const limited = workflow('limited', 1)
    .input<{ customer: string }>()
    .task('t', { handler: 'h', concurrency: { key: 'input.customer', limit: 1 } })
    .build();
  const rated = workflow('rated', 1)
    .task('t', { handler: 'h', rateLimit: [{ limit: 5, periodMs: 1000 }] })
    .build();
  const admitted = workflow('admitted', 1, { concurrency: { limit: 2 } })
    .task('t', { handler: 'h' })
    .build();
  const fan = workflow('fan', 1)
    .input<{ jobs: Array<{ tenant: string }> }>()
    .map('each', { items: 'input.jobs', handler: 'h', concurrency: { key: 'item.tenant', limit: 1 } })
    .build();
  const prioritized = workflow('prioritized', 1, { priority: 'input.urgency' })
    .task('t', { handler: 'h' })
    .build();
  const plain = workflow('plain', 1).task('t', { handler: 'h' }).build();
  const handlers = { h: () => 1 };

  it('refuses a typed definition with limits on a runner without flowControl, saying so in one line', () => {
    const typeOnly = () => {
      // @ts-expect-error Property 'kinds' is missing ... "flow control (concurrency, rateLimit, priority, fairness) runs only with kinds: [flowControl] from '@stepfold/engine'"
      createRunner({ store, workflows: [limited], handlers });
      // @ts-expect-error a rate limit in the list form
      createRunner({ store, workflows: [rated], handlers });
      // @ts-expect-error a workflow's instance limit
      createRunner({ store, workflows: [admitted], handlers });
      // @ts-expect-error a workflow's priority
      createRunner({ store, workflows: [prioritized], handlers });
      // @ts-expect-error a map's limit, with composition but not flowControl
      createRunner({ store, workflows: [fan], handlers, kinds: [composition] });
      // @ts-expect-error a map's limit with neither: both values are named
      createRunner({ store, workflows: [fan], handlers });
    };
    void typeOnly;
  });

  it('takes them with flowControl (beside composition for a map), and plain definitions without it', () => {
    const typeOnly = () => {
      createRunner({
        store,
        workflows: [limited, rated, admitted, prioritized],
        handlers,
        kinds: [flowControl],
      });
      createRunner({ store, workflows: [fan], handlers, kinds: [composition, flowControl] });
      createRunner({ store, workflows: [plain], handlers });
      createRunner({ store, workflows: [plain], handlers, kinds: [flowControl] });
    };
    void typeOnly;
  });

  it('a priority: a number or an input path on the workflow, a number on a start (runner, client, harness)', () => {
    const typeOnly = () => {
      workflow('p', 1, { priority: 5 });
      workflow('p', 1, { priority: 'input.urgency' });
      // @ts-expect-error a workflow's priority path reads only the input
      workflow('p', 1, { priority: 'outputs.a.urgency' });
      const runner = createRunner({ store, workflows: [prioritized], handlers, kinds: [flowControl] });
      void runner.start('prioritized', 'p-1', undefined, { priority: 10 });
      void runner.client(prioritized).start('p-2', undefined, { priority: 3 });
      // @ts-expect-error a priority is a number
      void runner.start('prioritized', 'p-1', undefined, { priority: 'high' });
      createHarness(prioritized, { kinds: [flowControl] }).start(undefined, { priority: 1 });
      // @ts-expect-error the harness's start options name only the priority
      createHarness(prioritized, { kinds: [flowControl] }).start(undefined, { urgency: 1 });
    };
    void typeOnly;
  });
});
