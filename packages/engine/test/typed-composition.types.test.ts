import {
  composition,
  createMemoryStore,
  createRunner,
  defineWorkflow,
  type HandlerContext,
  type HandlersFor,
  type MapSummary,
  type OutputOf,
  type StepOutputsOf,
  type WorkflowMapSummary,
  workflow,
} from '@stepfold/engine';
import { describe, expectTypeOf, it } from 'vitest';
import * as z from 'zod/mini';

// Type-level promises of the builder's child and map steps, checked by tsc (`pnpm typecheck`): each
// line marked as an expected error is a mistake the compiler must see. vitest runs these as no-ops.

type Line = { sku: string; qty: number };

const lineHandlers = {
  pick: async ({ input }: HandlerContext<Line>) => ({ picked: input.sku, at: new Date(0) }),
};
const shipLine = workflow('ship-line', 1)
  .handlers<typeof lineHandlers>()
  .input<Line>()
  .output<{ picked: string; at: string }>()
  .task('pick', { handler: 'pick' })
  .build();

const handlers = {
  price: async ({ input }: HandlerContext<Line>) => ({ cents: input.qty * 100, at: new Date(0) }),
  priceAt: async ({ input }: HandlerContext<{ sku: string; at: number; order: string }>) => input.at,
  unprice: async (_: HandlerContext<Line>) => null,
  release: async (_: HandlerContext<Line>) => null,
};

const orderInput = z.object({
  id: z.string(),
  lines: z.array(z.object({ sku: z.string(), qty: z.number() })),
  first: z.object({ sku: z.string(), qty: z.number() }),
});
const base = () => workflow('order', 1).handlers<typeof handlers>().input(orderInput);

const order = base()
  .child('first', { workflow: shipLine, input: 'input.first', compensate: 'release' })
  .map('prices', { items: 'input.lines', handler: 'price', compensate: 'unprice', maxConcurrency: 4 })
  .map('indexed', {
    items: 'input.lines',
    handler: 'priceAt',
    input: { sku: 'item.sku', at: 'index', order: 'input.id' },
  })
  .map('counted', { items: 'input.lines', handler: 'price', results: 'discard' })
  .map('ships', { items: 'input.lines', workflow: shipLine, tolerated: { count: 1 } })
  .map('shipped', { items: 'input.lines', workflow: shipLine, results: 'collect' })
  .build();
type Outputs = StepOutputsOf<typeof order>;

describe('child step', () => {
  it("outputs the child's declared output, as stored", () => {
    expectTypeOf<Outputs['first']>().toEqualTypeOf<OutputOf<typeof shipLine>>();
    expectTypeOf<Outputs['first']>().toEqualTypeOf<{ picked: string; at: string }>();
  });

  it("checks its input against the child's declared input", () => {
    const b = base();
    // @ts-expect-error the mapped input has no qty
    b.child('c', { workflow: shipLine, input: { sku: 'input.first.sku' } });
    // @ts-expect-error with no mapping, the workflow input ({ id, lines, first }) is not a Line
    b.child('c', { workflow: shipLine });
    // @ts-expect-error a typo in a mapped path
    b.child('c', { workflow: shipLine, input: 'input.frist' });
    // @ts-expect-error childId is a data path too
    b.child('c', { workflow: shipLine, input: 'input.first', childId: 'input.ID' });
    // @ts-expect-error compensate names a handler
    b.child('c', { workflow: shipLine, input: 'input.first', compensate: 'relase' });
    expectTypeOf(
      b.child('c', { workflow: shipLine, input: 'input.first', childId: 'input.id' }),
    ).not.toBeNever();
  });

  it('takes an untyped definition or a workflow name, with unknown input and output', () => {
    const json = defineWorkflow({ name: 'j', version: 1, start: 'a', steps: { a: { kind: 'succeed' } } });
    const w = base()
      .child('byDef', { workflow: json })
      .child('byName', { workflow: 'j', version: 1 })
      .build();
    expectTypeOf<StepOutputsOf<typeof w>['byDef']>().toEqualTypeOf<unknown>();
    expectTypeOf<StepOutputsOf<typeof w>['byName']>().toEqualTypeOf<unknown>();
  });
});

describe('the declared output', () => {
  it("is checked against a last child or map step's output", () => {
    base()
      .output<{ picked: string; at: string }>()
      .child('c', { workflow: shipLine, input: 'input.first' })
      .build();
    base().output<WorkflowMapSummary>().map('m', { items: 'input.lines', workflow: shipLine }).build();
    const wrong = base().output<{ picked: number }>();
    // @ts-expect-error the child ends with { picked: string; at: string }
    wrong.child('c', { workflow: shipLine, input: 'input.first' }).build();
    // @ts-expect-error the map ends with a summary
    wrong.map('m', { items: 'input.lines', workflow: shipLine }).build();
  });
});

describe('map step', () => {
  it("a handler map outputs its handler's results in item order (null for failed items)", () => {
    expectTypeOf<Outputs['prices']>().toEqualTypeOf<Array<{ cents: number; at: string } | null>>();
    expectTypeOf<Outputs['indexed']>().toEqualTypeOf<Array<number | null>>();
  });

  it('outputs a summary when results are discarded, and for a workflow map', () => {
    expectTypeOf<Outputs['counted']>().toEqualTypeOf<MapSummary>();
    expectTypeOf<Outputs['counted']>().toEqualTypeOf<{
      total: number;
      completed: number;
      failed: number[];
    }>();
    expectTypeOf<Outputs['ships']>().toEqualTypeOf<WorkflowMapSummary>();
    expectTypeOf<Outputs['ships']>().toEqualTypeOf<{
      total: number;
      completed: number;
      failed: number[];
      children: string;
    }>();
    expectTypeOf<Outputs['shipped']>().toEqualTypeOf<Array<{ picked: string; at: string } | null>>();
  });

  it("gives each handler the item, or the mapped input, in the runner's handler map", () => {
    type Needed = HandlersFor<readonly [typeof order]>;
    expectTypeOf<Parameters<Needed['price']>[0]['input']>().toEqualTypeOf<{ sku: string; qty: number }>();
    expectTypeOf<Parameters<Needed['unprice']>[0]['input']>().toEqualTypeOf<{ sku: string; qty: number }>();
    expectTypeOf<Parameters<Needed['priceAt']>[0]['input']>().toEqualTypeOf<{
      sku: string;
      at: number;
      order: string;
    }>();
    // A child step's compensation gets the step's mapped input.
    expectTypeOf<Parameters<Needed['release']>[0]['input']>().toEqualTypeOf<{ sku: string; qty: number }>();
  });

  it('refuses what the compiler can see', () => {
    const b = base();
    // @ts-expect-error "input.id is not a path to an array"
    b.map('m', { items: 'input.id', handler: 'price' });
    // @ts-expect-error a typo: Did you mean "input.lines"?
    b.map('m', { items: 'input.lnes', handler: 'price' });
    // @ts-expect-error the item ({ sku, qty }) does not fit priceAt: add an input mapping
    b.map('m', { items: 'input.lines', handler: 'priceAt' });
    // @ts-expect-error the mapped input lacks `order`
    b.map('m', { items: 'input.lines', handler: 'priceAt', input: { sku: 'item.sku', at: 'index' } });
    // @ts-expect-error a typo in an item path
    b.map('m', { items: 'input.lines', handler: 'price', input: { sku: 'item.skus', qty: 'item.qty' } });
    // @ts-expect-error index is a number: nothing below it
    b.map('m', { items: 'input.lines', handler: 'price', input: { sku: 'item.sku', qty: 'index.n' } });
    // @ts-expect-error the mapped input does not fit the child workflow
    b.map('m', { items: 'input.lines', workflow: shipLine, input: { sku: 'item.sku' } });
    // @ts-expect-error a map takes a handler or a workflow, not both
    b.map('m', { items: 'input.lines', workflow: shipLine, handler: 'price' });
    // @ts-expect-error a map needs a handler or a workflow
    b.map('m', { items: 'input.lines' });
    // @ts-expect-error a handler name that does not exist
    b.map('m', { items: 'input.lines', handler: 'prise' });
    expectTypeOf(b.map('m', { items: 'input.lines', handler: 'price' })).not.toBeNever();
  });

  it('maps over an earlier output, and over an undeclared input', () => {
    const listed = base()
      .map('found', { items: 'input.lines', handler: 'price' })
      .map('again', {
        items: 'outputs.found',
        handler: 'priceAt',
        input: { sku: 'input.id', at: 'index', order: 'input.id' },
      })
      .build();
    expectTypeOf<StepOutputsOf<typeof listed>['again']>().toEqualTypeOf<Array<number | null>>();
    const loose = workflow('loose', 1)
      .map('m', { items: 'input.anything', handler: 'h', input: 'item.x' })
      .build();
    expectTypeOf<StepOutputsOf<typeof loose>['m']>().toEqualTypeOf<unknown[]>();
  });
});

describe('the runner', () => {
  const store = createMemoryStore();
  const all = { ...handlers, ...lineHandlers };

  it('takes a parent with the workflows its child and map steps start', () => {
    const typeOnly = () =>
      createRunner({ store, workflows: [order, shipLine], handlers: all, kinds: [composition] });
    expectTypeOf(typeOnly).returns.not.toBeNever();
  });

  it("refuses a parent without its children's workflows", () => {
    // Only compiled: at run time this throws UNKNOWN_WORKFLOW.
    const typeOnly = () =>
      // @ts-expect-error Property '"ship-line"' is missing ... '{ "ship-line": "a workflow a child or map step starts: register it too" }'
      createRunner({ store, workflows: [order], handlers, kinds: [composition] });
    void typeOnly;
  });

  it('refuses a child or map step pinned to a version the runner does not register', () => {
    // Only compiled: at run time createRunner throws UNKNOWN_VERSION.
    const label = workflow('label', 1).task('print', { handler: 'print' }).build();
    const label2 = workflow('label', 2).task('print', { handler: 'print' }).build();
    const pinned = workflow('pinned', 1).child('label', { workflow: label, version: 2 }).build();
    const fan = workflow('fan', 1)
      .input<{ xs: number[] }>()
      .map('each', { items: 'input.xs', workflow: label, version: 3 })
      .build();
    const print = { print: () => 1 };
    const typeOnly = () => {
      createRunner({ store, workflows: [pinned, label, label2], handlers: print, kinds: [composition] });
      // @ts-expect-error label v2: a child or map step pins this version, so register it in workflows too
      createRunner({ store, workflows: [pinned, label], handlers: print, kinds: [composition] });
      // @ts-expect-error label v3: a child or map step pins this version, so register it in workflows too
      createRunner({ store, workflows: [fan, label, label2], handlers: print, kinds: [composition] });
      // Unpinned, a child starts the newest registered version: any will do.
      const newest = workflow('newest', 1).child('label', { workflow: label }).build();
      createRunner({ store, workflows: [newest, label2], handlers: print, kinds: [composition] });
    };
    void typeOnly;
  });

  it('cannot tell with a JSON definition among the workflows (the runtime check remains)', () => {
    const json = defineWorkflow({ name: 'j', version: 1, start: 'a', steps: { a: { kind: 'succeed' } } });
    const typeOnly = () => createRunner({ store, workflows: [order, json], handlers, kinds: [composition] });
    expectTypeOf(typeOnly).returns.not.toBeNever();
  });

  it('refuses child and map steps without kinds: [composition], saying so in one line', () => {
    const label = workflow('label', 1).task('print', { handler: 'print' }).build();
    const shipment = workflow('shipment', 1).child('label', { workflow: label }).build();
    const fan = workflow('fan', 1)
      .input<{ xs: number[] }>()
      .map('each', { items: 'input.xs', handler: 'h' })
      .build();
    const typeOnly = () => {
      // @ts-expect-error Property 'kinds' is missing ... '{ kinds: "child and map steps run only with kinds: [composition] from '@stepfold/engine'"; }'
      createRunner({ store, workflows: [shipment, label], handlers: { print: () => 1 } });
      // @ts-expect-error Type '[]' is not assignable to type '... "child and map steps run only with kinds: [composition] from '@stepfold/engine'"'
      createRunner({ store, workflows: [fan], handlers: { h: () => 1 }, kinds: [] });
      createRunner({
        store,
        workflows: [shipment, label],
        handlers: { print: () => 1 },
        kinds: [composition],
      });
      // A definition without child or map steps needs no kinds.
      createRunner({ store, workflows: [label], handlers: { print: () => 1 } });
    };
    void typeOnly;
  });
});
