import {
  type AnyDefinition,
  composition,
  createMemoryStore,
  createRunner,
  defineWorkflow,
  type HandlerContext,
  TaskError,
  workflow,
} from '@stepfold/engine';
import { describe, expect, expectTypeOf, it } from 'vitest';

// The builder's child and map steps at run time: they build the same JSON as the hand-written
// form, and a typed parent runs its children through a runner with the types it promised.

type Line = { sku: string; qty: number };

const lineHandlers = {
  pick: async ({ input }: HandlerContext<Line>) => {
    if (input.sku === 'GONE') throw new TaskError('out of stock', { code: 'OUT_OF_STOCK', retryable: false });
    return { picked: input.sku, qty: input.qty };
  },
  unpick: async (_: HandlerContext<Line>) => null,
};
const shipLine = workflow('ship-line', 1)
  .handlers<typeof lineHandlers>()
  .input<Line>()
  .output<{ picked: string; qty: number }>()
  .task('pick', { handler: 'pick', compensate: 'unpick' })
  .build();

const handlers = {
  price: async ({ input }: HandlerContext<{ sku: string; at: number }>) => input.sku.length * 100 + input.at,
  release: async (_: HandlerContext<Line>) => null,
};
const order = workflow('order', 1)
  .handlers<typeof handlers>()
  .input<{ id: string; lines: Line[]; gift: Line }>()
  .map('prices', {
    items: 'input.lines',
    handler: 'price',
    input: { sku: 'item.sku', at: 'index' },
    maxConcurrency: 2,
    retry: { maxAttempts: 2 },
  })
  .map('ship', { items: 'input.lines', workflow: shipLine, maxConcurrency: 3, tolerated: { count: 1 } })
  .child('gift', { workflow: shipLine, input: 'input.gift', childId: 'input.id', compensate: 'release' })
  .build();

const orderJson = defineWorkflow({
  name: 'order',
  version: 1,
  start: 'prices',
  steps: {
    prices: {
      kind: 'map',
      items: 'input.lines',
      handler: 'price',
      input: { sku: 'item.sku', at: 'index' },
      maxConcurrency: 2,
      retry: { maxAttempts: 2 },
      next: 'ship',
    },
    ship: {
      kind: 'map',
      items: 'input.lines',
      workflow: 'ship-line',
      maxConcurrency: 3,
      tolerated: { count: 1 },
      next: 'gift',
    },
    gift: {
      kind: 'child',
      workflow: 'ship-line',
      input: 'input.gift',
      childId: 'input.id',
      compensate: 'release',
    },
  },
});

describe('typed child and map steps', () => {
  it('build the same definition as the JSON form, the child named by its workflow', () => {
    expect(order).toEqual(orderJson);
    const byName = workflow('p', 1)
      .child('c', { workflow: 'ship-line', version: 1, timeoutMs: 60_000, pivot: true })
      .map('m', { items: 'input.xs', workflow: 'ship-line', results: 'collect', end: true })
      .build();
    expect(byName).toEqual(
      defineWorkflow({
        name: 'p',
        version: 1,
        start: 'c',
        steps: [
          {
            id: 'c',
            kind: 'child',
            workflow: 'ship-line',
            version: 1,
            timeoutMs: 60_000,
            pivot: true,
            next: 'm',
          },
          { id: 'm', kind: 'map', items: 'input.xs', workflow: 'ship-line', results: 'collect' },
        ],
      }),
    );
  });

  it('run through a runner with the outputs their types promise', async () => {
    const store = createMemoryStore();
    const runner = createRunner({
      kinds: [composition],
      store,
      workflows: [order, shipLine],
      handlers: { ...handlers, ...lineHandlers },
    });
    const lines = [
      { sku: 'A', qty: 1 },
      { sku: 'GONE', qty: 2 },
      { sku: 'CCC', qty: 3 },
    ];
    const s = await runner.client(order).start('o-1', { id: 'gift-o-1', lines, gift: { sku: 'G', qty: 9 } });
    expect(s.status).toBe('completed');
    const prices = s.steps.prices?.output;
    expectTypeOf(prices).toEqualTypeOf<Array<number | null> | undefined>();
    expect(prices).toEqual([100, 401, 302]);
    const ship = s.steps.ship?.output;
    // One line out of stock: tolerated; the summary says which and where the children are.
    expect(ship).toEqual({ total: 3, completed: 2, failed: [1], children: 'o-1/1/ship/1/' });
    const child = await runner.client(shipLine).get(`${ship?.children}2`);
    expect(child?.output).toEqual({ picked: 'CCC', qty: 3 });
    const gift = s.steps.gift?.output;
    expectTypeOf(gift).toEqualTypeOf<{ picked: string; qty: number } | undefined>();
    expect(gift).toEqual({ picked: 'G', qty: 9 });
    expect((await runner.client(shipLine).get('gift-o-1'))?.parent).toMatchObject({
      id: 'o-1',
      step: 'gift',
    });
  });

  it('are refused at run time by a runner without the child workflow (UNKNOWN_WORKFLOW)', () => {
    // The compiler refuses this too (typed-composition.types.test.ts); typed loosely to reach the runtime check.
    const workflows: readonly AnyDefinition[] = [order];
    expect(() =>
      createRunner({
        kinds: [composition],
        store: createMemoryStore(),
        workflows,
        handlers: { ...handlers, ...lineHandlers },
      }),
    ).toThrow(expect.objectContaining({ code: 'UNKNOWN_WORKFLOW' }));
  });
});
